#pragma once
// Where the serve session learns that a worker left or rejoined rotation.
// The session only forwards these events to the Dispatcher, which is the one
// record of availability; implemented by the TorchServe backend's health
// checks (pings and batch faults) and by test fakes.
#include <cstdint>
#include <functional>
#include <string>

namespace lull::core {

// A worker's outlier ejections (outlier_detector.h), for /metrics.
struct WorkerEjection {
  std::uint64_t total = 0;  // times consecutive failed batches took it out
  bool ejected = false;     // out now for that (until its ejection time is over and a ping passes)
};

class WorkerHealth {
 public:
  virtual ~WorkerHealth() = default;
  virtual int num_workers() const = 0;
  // The worker's state now (thread-safe).
  virtual bool worker_up(int worker) const = 0;
  // Called with (worker, up) whenever a worker leaves or rejoins rotation,
  // possibly from another thread. Set before the health checks start.
  virtual void set_health_handler(std::function<void(int worker, bool up)> handler) = 0;
  // Its ejections (thread-safe). A health source without outlier ejection
  // never ejects: zero, not ejected.
  virtual WorkerEjection ejection(int /*worker*/) const { return {}; }
  // Why the worker last went down or failed, for the log line ("" unknown;
  // thread-safe, and never calls the health handler).
  virtual std::string down_reason(int /*worker*/) const { return ""; }
};

}  // namespace lull::core
