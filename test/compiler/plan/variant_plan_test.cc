// Model variants from the plan (compiler/plan/variant_plan.h) on the small
// synthetic profile (fast, mid, slow; 100 / 300 / 900 MiB): the pick rule and
// the grouping on hand-made numbers, the candidate sets, and a whole plan
// checked against independent compiles (each load's pick meets the target
// and no other candidate that meets it is more accurate; the variants nest
// and each one's policies are its own set compiled at every load).
#include <catch2/catch.hpp>

#include <algorithm>

#include "compiler/compile_inputs.h"
#include "compiler/plan/memory_subsets.h"
#include "compiler/plan/variant_plan.h"
#include "compiler/solver/solver_registry.h"
#include "test/support/plan_fixtures.h"
#include "test/support/synthetic_profiles.h"

using namespace lull;
using namespace lull::compiler;

namespace {

// 1 worker, SLO 60 ms, N 8, 20 intervals, loads 20..200 step 20 (the sweep
// where the small profile's best set shrinks twice at a 1% target).
VariantPlanRequest small_request(double budget_mb = 0) {
  VariantPlanRequest r;
  r.spec.inputs.path = test::small_profile_path();
  r.spec.reduction.keep_all_models = true;
  r.spec.mdp = test::mdp_options(60000, 1, 1, 8, 20);
  r.spec.device = "cpu";
  for (double l = 20; l <= 200; l += 20) r.spec.loads_qps.push_back(l);
  r.target.max_violation = 0.01;
  r.worker_memory_mb = budget_mb;
  return r;
}

std::vector<std::string> names(const ReducedProfiles& p, const std::vector<int>& models) {
  std::vector<std::string> out;
  for (int i : models) out.push_back(p.models[static_cast<std::size_t>(i)].name);
  return out;
}

}  // namespace

TEST_CASE("variant pick: the most accurate set that meets the target, else the lowest violation") {
  const PlanTarget t{0.01, 0};
  // Candidate 1 is the most accurate but misses the target; 2 meets it and beats 0.
  CHECK(pick_candidate({{0.70, 0.001}, {0.90, 0.05}, {0.75, 0.009}}, {1, 3, 2}, t) == 2);
  // A tie in accuracy: the set with fewer models.
  CHECK(pick_candidate({{0.75, 0.001}, {0.75, 0.002}}, {3, 2}, t) == 1);
  // None meets it: the lowest violation; a load beyond capacity loses.
  CHECK(pick_candidate({{0.8, 0.20}, {0.7, 0.05}, {0.6, 0.01, true}}, {3, 2, 1}, t) == 1);
  // The accuracy floor counts too.
  CHECK(pick_candidate({{0.9, 0.001}, {0.6, 0.001}}, {2, 1}, PlanTarget{0.01, 0.7}) == 0);
  CHECK(pick_candidate({{0.65, 0.001}, {0.6, 0.0}}, {2, 1}, PlanTarget{0.01, 0.7}) == 1);
  CHECK_THROWS(pick_candidate({}, {}, t));
}

TEST_CASE("variant grouping: runs of equal sets, in load order") {
  const std::vector<std::vector<int>> by_load = {{0, 1, 2}, {0, 1, 2}, {0, 1}, {0, 1}, {0}, {0, 1}};
  const auto g = group_loads(by_load);
  REQUIRE(g.size() == 4);
  CHECK(g[0].first_load == 0);
  CHECK(g[0].models == std::vector<int>{0, 1, 2});
  CHECK(g[1].first_load == 2);
  CHECK(g[2].first_load == 4);
  CHECK(g[2].models == std::vector<int>{0});
  CHECK(g[3].first_load == 5);  // a set that comes back is a variant of its own
  CHECK(group_loads({}).empty());
  CHECK(group_loads({{0}, {0}}).size() == 1);
}

TEST_CASE("variant candidates: every set holding model 0 that fits the budget") {
  ReducedProfiles p = test::linear_models(4, 8);
  const double mem[] = {100, 300, 200, 600};
  for (int i = 0; i < 4; ++i) p.models[static_cast<std::size_t>(i)].memory_mb = mem[i];
  CHECK(subsets_with_fastest_within(p, 0).size() == 8);  // no budget: 2^3
  const auto c = subsets_with_fastest_within(p, 600);
  // {0} 100, {0,1} 400, {0,2} 300, {0,1,2} 600; not {0,3} (700).
  REQUIRE(c.size() == 4);
  CHECK(c[0] == std::vector<int>{0});
  CHECK(c[3] == std::vector<int>{0, 1, 2});
  for (const auto& s : c) CHECK(s.front() == 0);
  CHECK_THROWS_WITH(subsets_with_fastest_within(p, 50), Catch::Contains("below the smallest model's memory"));
  p.models[0].memory_mb = 250;  // model 0 is no longer the smallest, and alone it does not fit 220
  CHECK_THROWS_WITH(subsets_with_fastest_within(p, 220), Catch::Contains("fastest model's memory (m0: 250 MiB)"));
  p.models[1].memory_mb = 0;
  CHECK_THROWS_WITH(subsets_with_fastest_within(p, 600), Catch::Contains("m1") && Catch::Contains("memory_mb"));
  CHECK_THROWS_WITH(subsets_with_fastest_within(test::linear_models(kMaxVariantModels + 1, 4), 0),
                    Catch::Contains("at most 12 models"));
}

TEST_CASE("a variant plan: each load's pick checked against independent compiles, and the variants nest") {
  const auto req = small_request();
  const auto inputs = load_compile_inputs(req.spec);
  auto solver = make_solver("cpu", nullptr);
  const VariantPlan plan = plan_variants(req, inputs.profiles, *solver);
  REQUIRE(plan.loads.size() == req.spec.loads_qps.size());
  CHECK(plan.candidates == 4);  // {fast}, {fast, mid}, {fast, slow}, all three
  // At low load all three models, then fewer as the load grows (this profile
  // at 1 worker and 1%: {fast, mid} from 80, {fast} from 120 QPS).
  REQUIRE(plan.variants.size() >= 2);
  CHECK(plan.variants[0].from_qps == 0);
  CHECK(names(inputs.profiles, plan.variants[0].models) == std::vector<std::string>{"fast", "mid", "slow"});
  const auto& first = plan.variants[0].models;
  for (std::size_t v = 0; v < plan.variants.size(); ++v) {
    const auto& var = plan.variants[v];
    INFO("variant " << v);
    if (v > 0) CHECK(var.from_qps > plan.variants[v - 1].from_qps);
    CHECK(var.models.front() == 0);
    CHECK(std::includes(first.begin(), first.end(), var.models.begin(), var.models.end()));
    CHECK(var.models != (v > 0 ? plan.variants[v - 1].models : std::vector<int>{}));
    // Its policies: its own models, at every load of the sweep.
    REQUIRE(var.sweep.set.models_size() == static_cast<int>(var.models.size()));
    for (std::size_t i = 0; i < var.models.size(); ++i)
      CHECK(var.sweep.set.models(static_cast<int>(i)).name() ==
            inputs.profiles.models[static_cast<std::size_t>(var.models[i])].name);
    CHECK(var.sweep.set.policies_size() == static_cast<int>(req.spec.loads_qps.size()));
  }
  CHECK(plan.variants.back().models.size() < first.size());
  // Each load: compile every candidate within the first set independently;
  // the pick meets the target and none that meets it is more accurate; when
  // none meets it (200 QPS here), the pick has the lowest violation.
  const auto candidates = subsets_with_fastest_within(inputs.profiles, 0);
  int met = 0;
  for (const auto& pick : plan.loads) {
    INFO("load " << pick.load_qps);
    bool any_meets = false;
    double lowest_violation = 1;
    for (const auto& s : candidates) {
      if (!std::includes(first.begin(), first.end(), s.begin(), s.end())) continue;
      const LoadReport r = compile_load(restrict_models(inputs.profiles, s), req.spec, pick.load_qps, *solver);
      const bool m = !r.beyond_capacity && r.expected_violation_rate <= req.target.max_violation;
      any_meets = any_meets || m;
      if (!r.beyond_capacity) lowest_violation = std::min(lowest_violation, r.expected_violation_rate);
      if (s == pick.models) CHECK(r.expected_accuracy == Approx(pick.expected.accuracy).epsilon(1e-12));
      if (m) CHECK(r.expected_accuracy <= pick.expected.accuracy + 1e-12);
    }
    CHECK(pick.meets_target == any_meets);
    if (pick.meets_target) {
      ++met;
      CHECK(pick.expected.violation_rate <= req.target.max_violation);
    } else {
      CHECK(pick.expected.violation_rate == Approx(lowest_violation).epsilon(1e-12));
    }
    // The variant serving this load (the last one starting at or below it) holds the pick.
    std::size_t v = 0;
    for (std::size_t i = 0; i < plan.variants.size(); ++i)
      if (pick.load_qps >= plan.variants[i].from_qps) v = i;
    CHECK(plan.variants[v].models == pick.models);
  }
  CHECK(met >= 8);  // 20..160 QPS at least
}

TEST_CASE("a variant plan under a memory budget: every set fits, later ones within the first") {
  const auto req = small_request(1000);  // all three (1300 MiB) do not fit
  const auto inputs = load_compile_inputs(req.spec);
  auto solver = make_solver("cpu", nullptr);
  const VariantPlan plan = plan_variants(req, inputs.profiles, *solver);
  CHECK(plan.candidates == 3);  // {fast}, {fast, mid}, {fast, slow}
  for (const auto& v : plan.variants) {
    CHECK(v.memory_mb <= 1000);
    CHECK(std::includes(plan.variants[0].models.begin(), plan.variants[0].models.end(), v.models.begin(),
                        v.models.end()));
  }
  CHECK(plan.variants[0].models.size() == 2);
}

TEST_CASE("a variant plan refuses bad input naming the flag") {
  auto solver = make_solver("cpu", nullptr);
  auto req = small_request();
  const auto inputs = load_compile_inputs(req.spec);
  auto one = req;
  one.spec.loads_qps = {100};
  CHECK_THROWS_WITH(plan_variants(one, inputs.profiles, *solver), Catch::Contains("--load-qps"));
  auto bad = req;
  bad.target.max_violation = 1;
  CHECK_THROWS_WITH(plan_variants(bad, inputs.profiles, *solver), Catch::Contains("--max-violation"));
  bad = req;
  bad.worker_memory_mb = -1;
  CHECK_THROWS_WITH(plan_variants(bad, inputs.profiles, *solver), Catch::Contains("--worker-memory-mb"));
  bad = req;
  bad.worker_memory_mb = 50;
  CHECK_THROWS_WITH(plan_variants(bad, inputs.profiles, *solver), Catch::Contains("below the smallest model's memory"));
}
