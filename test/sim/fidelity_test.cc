// Fidelity: on golden cases whose expected violation rate is below
// 1%, simulated accuracy per satisfied query (deterministic p95 latencies,
// 30 s of Poisson arrivals, 3 seeds) is within 1 point of the expectation and
// the violation rate is at most the expectation plus 0.5 points.
#include <catch2/catch.hpp>

#include "runtime/core/policy_loader.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/simulator.h"
#include "test/support/runtime_test_support.h"

using namespace lull::sim;

TEST_CASE("simulated accuracy and violations match the golden expectations", "[sim][fidelity]") {
  LULL_SKIP_WITHOUT_SHARED();
  int checked = 0;
  for (const auto& g : lull::test::golden_cases()) {
    if (g.expected_violation_rate >= 0.01) continue;
    const auto table = lull::core::policy_table_from_proto(g.set, {"image", g.workers, 150}, "golden");
    for (std::uint64_t seed : {1, 2, 3}) {
      RateArrivals arrivals({{0, 30, g.load_qps}}, ArrivalProcess{}, seed);
      CompiledLatency latency(table);
      const SimResult r = simulate(table, arrivals, latency, SimOptions{});
      INFO(g.workers << " workers, " << g.load_qps << " QPS, seed " << seed << ": accuracy "
                     << r.accuracy_per_satisfied_query << " (expected " << g.expected_accuracy << "), violations "
                     << r.violation_rate << " (expected " << g.expected_violation_rate << ")");
      CHECK(r.completed == r.arrivals);
      CHECK(static_cast<double>(r.arrivals) == Approx(30 * g.load_qps).epsilon(0.05));
      CHECK(std::abs(r.accuracy_per_satisfied_query - g.expected_accuracy) <= 0.01);
      CHECK(r.violation_rate <= g.expected_violation_rate + 0.005);
    }
    ++checked;
  }
  CHECK(checked >= 3);
}

TEST_CASE("the golden reference simulation (60 workers, 2000 QPS) is reproduced", "[sim][fidelity]") {
  LULL_SKIP_WITHOUT_SHARED();
  // ../shared/golden/README.md: 59,924 queries, accuracy 0.74905, violations 0.0000167.
  for (const auto& g : lull::test::golden_cases()) {
    if (g.workers != 60 || g.load_qps != 2000) continue;
    const auto table = lull::core::policy_table_from_proto(g.set, {}, "golden");
    RateArrivals arrivals({{0, 30, 2000}}, ArrivalProcess{}, 1);
    CompiledLatency latency(table);
    const SimResult r = simulate(table, arrivals, latency, SimOptions{});
    CHECK(r.accuracy_per_satisfied_query == Approx(0.74905).margin(0.003));
    CHECK(r.violation_rate < 0.001);
    return;
  }
  FAIL("golden case 60 workers / 2000 QPS not found");
}
