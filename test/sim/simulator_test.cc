// The simulator on the tiny table: hand-derivable outcomes at low load,
// conservation and reproducibility under overload, the baselines' plans.
#include <catch2/catch.hpp>

#include "runtime/sim/latency_model.h"
#include "runtime/sim/simulator.h"
#include "test/support/runtime_test_support.h"

namespace {

using namespace lull::sim;
using lull::core::PolicyTable;

SimResult run(const PolicyTable& table, SchedulerKind kind, double qps, double seconds, std::uint64_t seed) {
  RateArrivals arrivals({{0, seconds, qps}}, ArrivalProcess{}, seed);
  CompiledLatency latency(table);
  SimOptions o;
  o.scheduler = kind;
  o.seed = seed;
  o.model_switching_profile_s = 10;
  return simulate(table, arrivals, latency, o);
}

}  // namespace

TEST_CASE("at very low load every query finds an idle worker with full slack", "[sim]") {
  // State (1, J=2) holds model 0 in the tiny table: 10 ms, accuracy 0.5.
  const auto r = run(lull::test::tiny_table(), SchedulerKind::kLull, 1, 60, 4);
  CHECK(r.arrivals > 30);
  CHECK(r.completed == r.arrivals);
  CHECK(r.violated == 0);
  CHECK(r.accuracy_per_satisfied_query == Approx(0.5));
  CHECK(r.usage[0].decisions == r.arrivals);
  CHECK(r.usage[1].decisions == 0);
}

TEST_CASE("overload: every query is still accounted for, and runs are reproducible", "[sim]") {
  const auto table = lull::test::tiny_table();  // 2 workers serve at most ~200 QPS
  const auto a = run(table, SchedulerKind::kLull, 1000, 5, 11);
  CHECK(a.arrivals > 4500);
  CHECK(a.completed + a.dropped == a.arrivals);
  CHECK(a.violation_rate > 0.5);
  CHECK(a.new_policy_events >= 1);  // 1000 QPS is above the compiled grid
  CHECK(a.usage[1].fallbacks > 0);
  const auto b = run(table, SchedulerKind::kLull, 1000, 5, 11);
  CHECK(b.arrivals == a.arrivals);
  CHECK(b.violated == a.violated);
  CHECK(b.accuracy_per_satisfied_query == a.accuracy_per_satisfied_query);
  const auto c = run(table, SchedulerKind::kLull, 1000, 5, 12);
  CHECK(c.arrivals != a.arrivals);
  for (auto kind : {SchedulerKind::kJellyfish, SchedulerKind::kModelSwitching}) {
    const auto f = run(table, kind, 1000, 5, 11);
    CHECK(f.completed == f.arrivals);
    CHECK(f.arrivals == a.arrivals);  // same seed, same arrivals
  }
}

TEST_CASE("jellyfish+ serves its plan's model", "[sim][baseline]") {
  auto table = lull::test::tiny_table();
  table.policies[0].load_qps = 60;  // per worker 30 QPS: slow qualifies with batch 2
  const auto r = run(table, SchedulerKind::kJellyfish, 1, 60, 5);
  REQUIRE(r.plan.size() == 2);
  CHECK(r.plan[0].model == 1);
  CHECK(r.accuracy_per_satisfied_query == Approx(0.9));
  CHECK(r.violated == 0);
}

TEST_CASE("the reference end of run: queries still queued are not counted, batches in flight are", "[sim]") {
  // Tiny table, Jellyfish+ at grid load 100 QPS (50 per worker): fast, cap 2
  // (10 / 20 ms for 1 / 2 queries). Six queries at t = 0: workers 0 and 1
  // each take one (done at 10 ms), four wait; at 10 ms each worker takes two
  // (done at 30 ms).
  const auto table = lull::test::tiny_table();
  const std::vector<std::int64_t> at_zero(6, 0);
  for (const auto& [end_s, completed] : {std::pair<double, std::uint64_t>{0.005, 2}, {0.015, 6}, {0, 6}}) {
    ReplayArrivals arrivals(at_zero);
    CompiledLatency latency(table);
    SimOptions o;
    o.scheduler = SchedulerKind::kJellyfish;
    o.dispatch_end_s = end_s;
    const auto r = simulate(table, arrivals, latency, o);
    INFO("end " << end_s << " s");
    CHECK(r.arrivals == 6);
    CHECK(r.completed == completed);
    CHECK(r.not_dispatched_at_end == 6 - completed);
    CHECK(r.violated == 0);
    CHECK(r.simulated_s == Approx(completed == 6 ? 0.030 : 0.010));
  }
}

TEST_CASE("sampled latencies draw from the samples and scale unprofiled batches", "[sim][latency]") {
  const auto table = lull::test::tiny_table();
  RawProfiles raw;
  raw["fast"][1] = {5'000, 15'000};
  raw["slow"][1] = {40'000};
  raw["slow"][3] = {90'000};
  SampledLatency lat(table, raw, 9);
  bool saw5 = false, saw15 = false;
  for (int i = 0; i < 200; ++i) {
    const auto v = lat.batch_latency_us(0, 1);
    REQUIRE((v == 5'000 || v == 15'000));
    saw5 |= v == 5'000;
    saw15 |= v == 15'000;
  }
  CHECK((saw5 && saw15));
  CHECK(lat.batch_latency_us(0, 2) % 5'000 == 0);         // from batch 1, scaled by 20/10 ms
  CHECK(lat.batch_latency_us(1, 2) == 40'000 * 60 / 40);  // batch 2 unprofiled: batch 1 scaled
  CHECK(lat.batch_latency_us(1, 3) == 90'000);
  RawProfiles missing;
  missing["fast"][1] = {1};
  CHECK_THROWS_WITH(SampledLatency(table, missing, 1), Catch::Matchers::Contains("slow"));
}
