// ModelSwitching's offline choice (mdp-spec section 8): the 1% rule on its
// own, the 300 s offline runs on lull::test::three_models where the outcome
// is clear by hand, and, on the artifact's profiles and trace, that its
// backlog at overload no longer grows without bound.
#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/core/policy_loader.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/model_switching.h"
#include "runtime/sim/simulator.h"
#include "runtime/sim/trace_spec.h"
#include "test/support/runtime_test_support.h"

using namespace lull::sim;
using lull::test::three_models;

namespace {

// |x - mean| within 5 Poisson standard deviations.
bool poisson_close(double x, double mean) { return std::abs(x - mean) <= 5 * std::sqrt(mean); }

}  // namespace

TEST_CASE("modelswitching picks the most accurate model below 1% violations, else the fastest", "[sim][baseline]") {
  const auto t = three_models({1});  // accuracy: fast 0.5, mid 0.7, slow 0.9
  CHECK(model_switching_choice(t, {0.0, 0.0, 0.0}) == 2);
  CHECK(model_switching_choice(t, {0.0, 0.0099, 0.01}) == 1);  // 1% itself is not below 1%
  CHECK(model_switching_choice(t, {0.0, 0.02, 0.5}) == 0);
  CHECK(model_switching_choice(t, {0.5, 0.02, 0.03}) == 0);  // none below: the fastest
  CHECK(model_switching_choice(t, {0.0, -1, 0.5}) == 0);     // mid not run
}

TEST_CASE("modelswitching's offline runs: 300 s per model at the grid load, with modelswitching's cap",
          "[sim][baseline]") {
  // 1 QPS: slow (cap 2) violates only if 4 queries arrive within ~80 ms: kept.
  // 150 QPS: slow and mid serve at most 44 and 80 QPS (backlog, ~100% late);
  //   fast serves 166.7 QPS at b = 2 within 12 ms: kept. Cap: fast's b = 4.
  // 1000 QPS: every model is overloaded: the fastest, cap N = 4.
  const auto t = three_models({1, 150, 1000});
  CompiledLatency latency(t);
  SimOptions o;  // model_switching_profile_s: the default, 300 s
  std::vector<OfflineTrial> trials;
  const auto plan = model_switching_plan(t, latency, o, &trials);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].model == 2);
  CHECK(plan[0].max_batch == 2);
  CHECK(plan[1].model == 0);
  CHECK(plan[1].max_batch == 4);
  CHECK(plan[2].model == 0);
  CHECK(plan[2].max_batch == 4);

  // Models are tried from the most accurate down, stopping at the first below 1%.
  REQUIRE(trials.size() == 1 + 3 + 3);
  const int order[7] = {2, 2, 1, 0, 2, 1, 0};
  for (std::size_t i = 0; i < trials.size(); ++i) {
    INFO("trial " << i << ": grid " << trials[i].grid_point << " model " << trials[i].model << " violations "
                  << trials[i].violation_rate << " queries " << trials[i].queries);
    CHECK(trials[i].model == order[i]);
    CHECK(trials[i].max_batch == plan[trials[i].grid_point].max_batch);  // the cap, whatever the model
  }
  CHECK(trials[0].violation_rate < 0.01);
  CHECK(poisson_close(static_cast<double>(trials[0].queries), 300 * 1));
  CHECK(trials[1].violation_rate > 0.9);
  CHECK(trials[2].violation_rate > 0.9);
  CHECK(trials[3].violation_rate < 0.01);
  CHECK(poisson_close(static_cast<double>(trials[3].queries), 300 * 150));
  for (int i = 4; i < 7; ++i) CHECK(trials[i].violation_rate > 0.5);
}

TEST_CASE("reference replay at 60 workers: modelswitching's violations are close to jellyfish+'s",
          "[sim][baseline][slow]") {
  LULL_SKIP_WITHOUT_SHARED();
  const std::string trace = lull::test::shared_dir() + "/ramsis-artifact/twitter_04_25_norm.txt";
  const lull::test::GoldenCase* g60 = nullptr;
  for (const auto& g : lull::test::golden_cases())
    if (g.workers == 60) g60 = &g;
  REQUIRE(g60);
  // The golden case's 9 Pareto models (p95), SLO 150 ms, grid 200..4000 by 200.
  auto table = lull::core::policy_table_from_proto(g60->set, {}, "golden");
  const auto one = table.policies.front();
  table.policies.clear();
  for (int q = 200; q <= 4000; q += 200) {
    table.policies.push_back(one);
    table.policies.back().load_qps = q;
  }
  TraceSpec spec = parse_trace_spec("rate-file:" + trace);
  set_replay_mode(&spec, "reference");
  double viol[2] = {0, 0};
  const SchedulerKind kinds[2] = {SchedulerKind::kJellyfish, SchedulerKind::kModelSwitching};
  for (int i = 0; i < 2; ++i) {
    const auto source = make_arrival_source(spec, ArrivalProcess{}, 1);
    CompiledLatency latency(table);
    SimOptions o;
    o.scheduler = kinds[i];
    o.dispatch_end_s = trace_dispatch_end_s(spec);
    const SimResult r = simulate(table, *source, latency, o);
    viol[i] = r.violation_rate;
    WARN(scheduler_name(kinds[i]) << ": " << r.arrivals << " queries, violation rate " << r.violation_rate
                                  << ", accuracy " << r.accuracy_per_satisfied_query << ", not dispatched at end "
                                  << r.not_dispatched_at_end);
    CHECK(r.completed + r.not_dispatched_at_end == r.arrivals);
    // No unbounded backlog: what is left at the end is well under a second of load.
    CHECK(r.not_dispatched_at_end < 2000);
  }
  CHECK(std::abs(viol[1] - viol[0]) < 0.05);
}
