#pragma once
// The rule that picks a model variant, one copy for `lull serve` (the
// VariantController over the VariantSwitcher) and `lull simulate
// --variant-sets` (the simulated switch in virtual time):
// - MeasuredLoad: at each check, the mean arrival rate since the last check
//   feeds a load forecaster (by default the mean of the last 5 s: the
//   Dispatcher's own estimate follows bursts, and switching on it would
//   load and unload models every few seconds), whose value is the load;
// - VariantRule: choose_variant (with its hysteresis) says which variant
//   that load calls for, and a switch is tried at most once per dwell time.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/manager/load_forecast.h"

namespace lull::manager {

class MeasuredLoad {
 public:
  MeasuredLoad(std::unique_ptr<LoadForecaster> forecaster, std::int64_t start_us)
      : forecaster_(std::move(forecaster)), last_us_(start_us) {}
  // Any thread.
  void record_arrival() { arrivals_.fetch_add(1, std::memory_order_relaxed); }
  // Feeds the mean rate since the last call to the forecaster; returns its
  // value at `now_us`.
  double measure(std::int64_t now_us);
  const LoadForecaster& forecaster() const { return *forecaster_; }

 private:
  std::unique_ptr<LoadForecaster> forecaster_;
  std::atomic<std::uint64_t> arrivals_{0};
  std::uint64_t counted_ = 0;
  std::int64_t last_us_;
};

class VariantRule {
 public:
  // `from_qps`: each variant's lowest load, ascending from 0.
  VariantRule(std::vector<double> from_qps, double hysteresis, std::int64_t dwell_us)
      : from_qps_(std::move(from_qps)), hysteresis_(hysteresis), dwell_us_(dwell_us) {}
  // The variant to try to switch to from `current` at `load_qps`, or -1:
  // the load calls for `current`, or the last try was within the dwell
  // time. A variant returned counts as tried at `now_us`.
  int decide(int current, double load_qps, std::int64_t now_us);

 private:
  std::vector<double> from_qps_;
  double hysteresis_;
  std::int64_t dwell_us_;
  bool attempted_ = false;
  std::int64_t last_attempt_us_ = 0;
};

}  // namespace lull::manager
