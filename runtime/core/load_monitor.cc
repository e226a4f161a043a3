#include "runtime/core/load_monitor.h"

#include <stdexcept>

namespace lull::core {

LoadMonitor::LoadMonitor(std::int64_t window_us, int burstiness_window, int thinning)
    : window_us_(window_us), burstiness_(burstiness_window) {
  burstiness_.set_thinning(thinning);
  if (window_us <= 0)
    throw std::invalid_argument("load monitor window must be positive, got " + std::to_string(window_us) + " us");
}

void LoadMonitor::record_arrival(std::int64_t t_us) {
  arrivals_us_.push_back(t_us);
  burstiness_.record(t_us);
}

double LoadMonitor::estimate_qps(std::int64_t t_us) {
  while (!arrivals_us_.empty() && arrivals_us_.front() <= t_us - window_us_) arrivals_us_.pop_front();
  return static_cast<double>(arrivals_us_.size()) * 1e6 / static_cast<double>(window_us_);
}

}  // namespace lull::core
