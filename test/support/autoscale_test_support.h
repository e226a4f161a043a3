#pragma once
// A hand-made policy library for the autoscaler tests: worker counts 2, 4,
// 6, 8, 10, loads 100..1200 QPS by 100. The policy for k workers at load L
// expects violation 0.002 when L <= 100 k (else 0.03) and accuracy 0.8 when
// L <= 50 k (else 0.7): at a 1% target each worker carries 100 QPS, with an
// accuracy floor of 0.75 only 50. The price objective's tests pass their own
// accuracy (a function of workers and load) instead.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/pools/serving_autoscaler.h"
#include "runtime/core/policy_table.h"

namespace lull::test {

inline double step_accuracy(int k, int load) { return load <= 50 * k ? 0.8 : 0.7; }

inline std::vector<core::PolicyTable> autoscale_library(
    const std::function<double(int workers, int load)>& accuracy = step_accuracy) {
  std::vector<core::PolicyTable> lib;
  for (int k : {2, 4, 6, 8, 10}) {
    core::PolicyTable t;
    t.task = "test";
    t.slo_us = 150'000;
    t.workers = k;
    t.models = {core::ModelInfo{"m", 0.8, {10'000}}};
    for (int load = 100; load <= 1200; load += 100) {
      core::CompiledPolicy p;
      p.load_qps = load;
      p.expected_violation_rate = load <= 100 * k ? 0.002 : 0.03;
      p.expected_accuracy = accuracy(k, load);
      t.policies.push_back(p);
    }
    lib.push_back(t);
  }
  return lib;
}

// The serving autoscaler's settings in its tests: a tick a second, the 1 s
// peak forecast with no lead, scale-in held 2 s, failed starts retried after
// 1..8 s; each log line goes to `log`.
inline pools::ServingAutoscalerOptions quick_autoscaler_options(std::function<void(const std::string&)> log) {
  pools::ServingAutoscalerOptions o;
  o.autoscale.forecast = "window_max:1";
  o.autoscale.lead_us = 0;
  o.autoscale.tick_us = 1'000'000;
  o.autoscale.envelope = {{1'000'000, 1.25}};
  o.autoscale.scale_in_holdoff_us = 2'000'000;
  o.autoscale.scale_in_interval_us = 1'000'000;
  o.target = manager::CapacityTarget{0.01, 0};
  o.retry_base_us = 1'000'000;
  o.retry_max_us = 8'000'000;
  o.log = std::move(log);
  return o;
}

// autoscale_library's Poisson sets (100 QPS per worker at a 1% target), and
// the same counts compiled for gamma:2 (80 QPS per worker) and gamma:4 (60):
// a library for several arrival patterns.
inline std::vector<core::PolicyTable> pattern_library() {
  auto lib = autoscale_library();
  const std::size_t poisson_sets = lib.size();
  for (auto [cv2, per_worker] : {std::pair{2.0, 80}, std::pair{4.0, 60}})
    for (std::size_t i = 0; i < poisson_sets; ++i) {
      auto t = lib[i];
      t.arrivals = ArrivalProcess::gamma(cv2);
      for (auto& p : t.policies) p.expected_violation_rate = p.load_qps <= per_worker * t.workers ? 0.002 : 0.03;
      lib.push_back(t);
    }
  return lib;
}

}  // namespace lull::test
