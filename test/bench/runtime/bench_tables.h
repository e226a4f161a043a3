#pragma once
// A policy table shaped like the production ones (9 models, N = 32, FLD with
// 100 intervals, SLO 150 ms, 60 workers) with pseudo-random actions, so the
// benchmarks need no shared data.
#include <random>

#include "runtime/core/policy_table.h"

namespace lull::bench {

inline core::PolicyTable production_shaped_table(int loads = 20) {
  core::PolicyTable t;
  t.task = "bench";
  t.slo_us = 150'000;
  t.workers = 60;
  const int n_max = 32, intervals = 100;
  for (int m = 0; m < 9; ++m) {
    core::ModelInfo info{"m" + std::to_string(m), 0.58 + 0.03 * m, {}};
    for (int b = 1; b <= n_max + 1; ++b) info.latency_us.push_back((15 + 12 * m) * 1000.0 + b * (4 + 2 * m) * 1000.0);
    t.models.push_back(info);
  }
  std::mt19937 rng(1);
  for (int l = 1; l <= loads; ++l) {
    core::CompiledPolicy p;
    p.load_qps = 200.0 * l;
    p.max_queue = n_max;
    for (int j = 0; j <= intervals; ++j) p.slack_grid_us.push_back(j * 150'000.0 / intervals);
    for (int s = 0; s < n_max * (intervals + 1); ++s)
      p.actions.push_back(
          core::Action{static_cast<std::uint16_t>(rng() % 9), static_cast<std::uint16_t>(s / (intervals + 1) + 1)});
    p.actions.push_back(core::Action{0, static_cast<std::uint16_t>(n_max + 1)});
    t.policies.push_back(std::move(p));
  }
  return t;
}

}  // namespace lull::bench
