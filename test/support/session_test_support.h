#pragma once
// What the serve session's tests share, with or without model servers: a
// hand-built policy table and a reader of one /metrics sample line.
#include <string>

#include "runtime/core/policy_table.h"

namespace lull::serve::testing {

// One policy: a queue of 1 -> "big" (model 1) alone; longer queues fall back
// to "small" (model 0) serving everything. SLO 500 ms; big takes 20 ms.
inline core::PolicyTable tiny_session_table(int workers) {
  core::PolicyTable t;
  t.task = "classify";
  t.slo_us = 500'000;
  t.workers = workers;
  t.models = {{"small", 0.6, {5e3, 6e3, 7e3, 8e3}}, {"big", 0.7, {20e3, 22e3, 24e3, 26e3}}};
  core::CompiledPolicy p;
  p.load_qps = 100;
  p.max_queue = 1;
  p.slack_grid_us = {0};
  p.actions = {{1, 1}, {0, 1}};
  p.expected_accuracy = 0.7;
  t.policies = {p};
  return t;
}

// The first sample line of Prometheus text starting with `prefix` (not its
// # HELP line), or "".
inline std::string metric_line(const std::string& metrics, const std::string& prefix) {
  const auto at = metrics.find("\n" + prefix);
  return at == std::string::npos ? "" : metrics.substr(at + 1, metrics.find('\n', at + 1) - at - 1);
}

}  // namespace lull::serve::testing
