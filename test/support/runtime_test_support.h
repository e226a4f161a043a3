#pragma once
// Helpers for the runtime tests: a tiny hand-made policy set whose every
// state has a distinct, predictable action, and the golden cases of
// ../shared/golden turned into policy sets.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/policy_table.h"
#include "runtime/sim/arrivals.h"
#include "schema/policy.pb.h"
#include "test/support/shared_dir.h"

namespace lull::test {

bool have_golden_and_artifact();

// Two models (fast: acc 0.5, lat 10 ms + 10 ms per extra query; slow: acc 0.9,
// lat 40 ms + 20 ms per extra), SLO 150 ms, N = 2, slack grid {0, 50, 100} ms,
// workers 2, loads {100, 200} QPS. State s (in table order) gets model s % 2
// and batch n, except F which gets (0, 3).
schema::PolicySet tiny_policy_set();
core::PolicyTable tiny_table();
// tiny_table for 2, 4, 6 and 8 workers, with loads 10 k and 20 k QPS for k
// workers: the first expects 0.1% violations, the second 5%, so at a 1%
// target each worker carries 10 QPS (the autoscaler's tests).
std::vector<core::PolicyTable> tiny_scaling_library();

// Three models for the baselines' rules, SLO 100 ms, K = 1, N = 4, one
// (action-less) compiled policy per load; lat in ms for b = 1..5:
//   fast (acc 0.5): 10 12 14 16 18
//   mid  (acc 0.7): 20 30 40 50 60
//   slow (acc 0.9): 30 50 70 90 110
core::PolicyTable three_models(const std::vector<double>& loads_qps);

struct GoldenCase {
  int workers = 0;
  double load_qps = 0;
  double expected_accuracy = 0;
  double expected_violation_rate = 0;
  schema::PolicySet set;  // one policy, the golden one, with the artifact's p95 latencies
};

// All golden cases (requires have_golden_and_artifact()).
const std::vector<GoldenCase>& golden_cases();

// Writes `text` to a file in a test temp folder and returns its path.
std::string write_temp(const std::string& name, const std::string& text);
// Every arrival time a source yields.
std::vector<std::int64_t> drain(sim::ArrivalSource& src);

}  // namespace lull::test

#define LULL_SKIP_WITHOUT_SHARED() \
  LULL_REQUIRE_SHARED_DATA(lull::test::have_golden_and_artifact(), "golden/ or ramsis-artifact/")
