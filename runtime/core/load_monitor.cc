#include "runtime/core/load_monitor.h"

#include <stdexcept>

namespace lull::core {

LoadMonitor::LoadMonitor(std::int64_t window_us, int burstiness_window, int thinning)
    : window_us_(window_us), thinning_(thinning), burstiness_(burstiness_window) {
  burstiness_.set_thinning(thinning);
  if (window_us <= 0)
    throw std::invalid_argument("load monitor window must be positive, got " + std::to_string(window_us) + " us");
}

void LoadMonitor::record_arrival(std::int64_t t_us) {
  arrivals_us_.push_back(t_us);
  burstiness_.record(t_us);
}

double LoadMonitor::estimate_qps(std::int64_t t_us) {
  const std::int64_t start = t_us - window_us_;
  while (!arrivals_us_.empty() && arrivals_us_.front() <= start) {
    left_us_ = arrivals_us_.front();
    arrivals_us_.pop_front();
  }
  if (thinning_ == 1 || arrivals_us_.empty())
    return static_cast<double>(arrivals_us_.size()) * 1e6 / static_cast<double>(window_us_);
  // A shard: k - 1 gaps between its arrivals in the window, and the part of
  // the gap the window starts in (header); times G that is the fleet's count.
  const std::int64_t oldest = arrivals_us_.front();
  const double part = left_us_ < 0 ? 0.5 : static_cast<double>(oldest - start) / static_cast<double>(oldest - left_us_);
  return (static_cast<double>(arrivals_us_.size() - 1) + part) * 1e6 / static_cast<double>(window_us_);
}

}  // namespace lull::core
