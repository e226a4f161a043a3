#pragma once
// The TorchServe backend's two periodic decisions as Controllers
// (runtime/core/control_loop.h) on the backend's injected clock, apart from
// the sending (torchserve_backend.h):
// - HealthChecker: every health_interval_ms, rereads a key file that changed
//   and pings every worker; a ping's answer takes a worker out of rotation or
//   brings back one that was down (not ejected);
// - OutlierEjector: when an ejected worker's ejection time is over (or the
//   keys it refused were replaced), sends it its probe batch; a passing probe
//   brings it back, a failing one ejects it again for twice as long.
// Both change each worker's HealthRecords (health_records.h), which the
// backend owns and guards with its one lock (taking a worker down and
// failing the batches it holds is one step).
// `lull serve` runs them on a ControlLoop of their own in real time; tests
// tick them on a virtual clock.
#include <cstdint>
#include <string>

#include "runtime/core/control_loop.h"

namespace lull::torchserve {

class TorchServeBackend;

class HealthChecker final : public core::Controller {
 public:
  HealthChecker(TorchServeBackend& backend, std::int64_t interval_us) : backend_(backend), interval_us_(interval_us) {}
  // The first tick one interval after `now_us` (the backend's start, after its first round of pings).
  void begin(std::int64_t now_us) { next_us_ = now_us + interval_us_; }
  std::string controller_name() const override { return "health checks"; }
  std::int64_t next_tick_us() const override { return next_us_; }
  void tick(std::int64_t now_us) override;

 private:
  TorchServeBackend& backend_;
  std::int64_t interval_us_;
  std::int64_t next_us_ = kNever;
};

class OutlierEjector final : public core::Controller {
 public:
  explicit OutlierEjector(TorchServeBackend& backend) : backend_(backend) {}
  std::string controller_name() const override { return "outlier ejection"; }
  // The earliest time an ejected worker is due its probe (kNever: none is).
  std::int64_t next_tick_us() const override;
  void tick(std::int64_t now_us) override;
  // Any thread: a worker was ejected or its keys were replaced; look again.
  void wake() const { wake_loop(); }

 private:
  TorchServeBackend& backend_;
};

}  // namespace lull::torchserve
