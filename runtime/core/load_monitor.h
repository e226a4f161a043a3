#pragma once
// Estimates the central arrival rate as the number of arrivals in the last
// window (500 ms by default, mdp-spec.md 7) divided by the window length,
// and the arrivals' burstiness (runtime/core/burstiness_estimator.h).
//
// A shard (thinning G > 1) sees every G-th arrival of the fleet's stream, so
// its k arrivals in the window stand for G*k of the fleet's only to within G:
// read at an arrival, G*k is one lull's count plus (G-1)/2 on average, and
// its lattice of G crosses each compiled load at other counts than one
// lull's. It counts k - 1 + f instead, f the part of the gap before its
// oldest arrival in the window that lies in the window (1/2 until an
// arrival has left the window): on a Poisson stream G times that crosses
// every compiled load with one lull's probability, so the shard picks
// policies as one lull does (experiments/results/shards-2026-11-29.md).
// The estimate stays the shard's own load (its view's loads are the fleet's
// divided by G). G = 1 counts arrivals as above.
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
  // Arrivals in (t_us - window, t_us] per second (with thinning G > 1: the
  // fleet's, read at the shard's latest arrival, as above); forgets older ones.
  double estimate_qps(std::int64_t t_us);
  std::int64_t window_us() const { return window_us_; }
  const BurstinessEstimator& burstiness() const { return burstiness_; }

 private:
  std::int64_t window_us_;
  int thinning_;
  std::deque<std::int64_t> arrivals_us_;
  std::int64_t left_us_ = -1;  // the newest arrival that left the window; -1: none yet
  BurstinessEstimator burstiness_;
};

}  // namespace lull::core
