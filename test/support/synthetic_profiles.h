#pragma once
// Hand-made reduced profiles for tests that need no ../shared data: latencies
// linear in the batch size, so expected behaviour can be derived by hand.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/profile/model_table.h"

namespace lull::test {

// `count` models, fastest first, lat(b) = (base + slope * b) (1 + 0.6 m)
// microseconds, accuracies evenly spaced from 0.6 to 0.85.
inline compiler::ReducedProfiles linear_models(int count, int max_queue, double base_us = 8000,
                                               double slope_us = 3000) {
  compiler::ReducedProfiles r;
  r.task = "test";
  for (int m = 0; m < count; ++m) {
    compiler::ModelTable t;
    t.name = "m" + std::to_string(m);
    t.accuracy = 0.6 + 0.25 * m / std::max(1, count - 1);
    for (int b = 1; b <= max_queue + 1; ++b) t.latency_us.push_back((base_us + slope_us * b) * (1 + 0.6 * m));
    r.models.push_back(t);
  }
  return r;
}

// One model per (accuracy, base ms) pair: lat(b) = base + per_item (b - 1) milliseconds.
inline compiler::ReducedProfiles linear_profiles(std::vector<std::pair<double, double>> acc_and_base_ms, int N,
                                                 double per_item_ms) {
  compiler::ReducedProfiles r;
  r.task = "test";
  for (std::size_t m = 0; m < acc_and_base_ms.size(); ++m) {
    compiler::ModelTable t;
    t.name = "m" + std::to_string(m);
    t.accuracy = acc_and_base_ms[m].first;
    for (int b = 1; b <= N + 1; ++b) t.latency_us.push_back((acc_and_base_ms[m].second + per_item_ms * (b - 1)) * 1000);
    r.models.push_back(t);
  }
  return r;
}

// MDP options with the given SLO, workers K, load, largest queue N and D
// slack intervals (FLD, maximal batching unless changed).
inline compiler::MdpOptions mdp_options(double slo_us, int K, double load_qps, int N, int intervals) {
  compiler::MdpOptions o;
  o.slo_us = slo_us;
  o.workers = K;
  o.load_qps = load_qps;
  o.max_queue = N;
  o.intervals = intervals;
  return o;
}

// A small MDP for linear_models(..., 8): SLO 60 ms, N = 8, K workers at
// qps_per_worker each, D slack intervals.
inline compiler::MdpOptions small_mdp_options(int K, double qps_per_worker, int intervals, compiler::Batching batching,
                                              compiler::Discretization disc = compiler::Discretization::kFld) {
  compiler::MdpOptions o = mdp_options(60000, K, qps_per_worker * K, 8, intervals);
  o.discretization = disc;
  o.batching = batching;
  return o;
}

}  // namespace lull::test
