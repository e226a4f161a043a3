#pragma once
// Estimates the central arrival rate as the number of arrivals in the last
// window (500 ms by default, mdp-spec.md 7) divided by the window length,
// and the arrivals' burstiness (runtime/core/burstiness_estimator.h).
#include <cstdint>
#include <deque>

#include "runtime/core/burstiness_estimator.h"

namespace lull::core {

class LoadMonitor {
 public:
  // `thinning`: the arrivals are every thinning-th of the stream whose
  // burstiness is wanted (BurstinessEstimator::set_thinning).
  explicit LoadMonitor(std::int64_t window_us = 500'000, int burstiness_window = BurstinessEstimator::kDefaultWindow,
                       int thinning = 1);
  void record_arrival(std::int64_t t_us);
  // Arrivals in (t_us - window, t_us] per second; forgets older arrivals.
  double estimate_qps(std::int64_t t_us);
  std::int64_t window_us() const { return window_us_; }
  const BurstinessEstimator& burstiness() const { return burstiness_; }

 private:
  std::int64_t window_us_;
  std::deque<std::int64_t> arrivals_us_;
  BurstinessEstimator burstiness_;
};

}  // namespace lull::core
