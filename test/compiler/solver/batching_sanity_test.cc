// Variable batching and MD on the CPU solver: actions stay within the queue,
// MD's grid is the set of profiled latencies, and a larger action set never
// lowers the value (value iteration is monotone in the actions it may pick).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>

#include "compiler/mdp/slack_grid.h"
#include "compiler/solver/solver.h"
#include "test/support/golden_cases.h"

TEST_CASE("variable batching: batches within the queue, values at least maximal batching's", "[batching][golden]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  auto cpu = lull::compiler::make_cpu_solver();
  for (auto disc : {lull::compiler::Discretization::kFld, lull::compiler::Discretization::kMd}) {
    const auto pm = lull::compiler::build_mdp_problem(
        profiles, lull::test::golden_profile_options(lull::compiler::Batching::kMaximal, disc));
    const auto pv = lull::compiler::build_mdp_problem(
        profiles, lull::test::golden_profile_options(lull::compiler::Batching::kVariable, disc));
    REQUIRE(pm.num_states() == pv.num_states());
    CHECK(pv.actions.size() > pm.actions.size());
    const auto om = cpu->solve(pm, {});
    const auto ov = cpu->solve(pv, {});
    int partial_chosen = 0;
    for (int s = 0; s < pv.num_states(); ++s) {
      const int n = pv.n_of(s);
      if (ov.choice[s] < 0) {
        CHECK(n == 0);
        continue;
      }
      const auto& a = pv.actions[ov.choice[s]];
      CHECK(a.batch >= 1);
      CHECK(a.batch <= n);
      if (s == pv.full_state()) CHECK(a.batch == pv.N() + 1);
      partial_chosen += a.partial();
      CHECK(ov.values[s] >= om.values[s] - 1e-9 * std::max(1.0, om.values[s]));
    }
    std::printf(
        "%s: expected accuracy maximal %.6f, variable %.6f; violations %.6f, %.6f; %d states serve part of the queue\n",
        disc == lull::compiler::Discretization::kMd ? "MD" : "FLD D=100", om.expected_accuracy, ov.expected_accuracy,
        om.expected_violation_rate, ov.expected_violation_rate, partial_chosen);
    CHECK(partial_chosen > 0);
    CHECK(ov.expected_accuracy == Approx(om.expected_accuracy).margin(1e-3));
  }
}

TEST_CASE("MD: the slack grid is the profiled latencies within the SLO", "[batching][md][golden]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  const auto p = lull::compiler::build_mdp_problem(
      profiles,
      lull::test::golden_profile_options(lull::compiler::Batching::kMaximal, lull::compiler::Discretization::kMd));
  CHECK(p.grid_us.front() == 0);
  CHECK(p.grid_us.back() == 150000);
  CHECK(std::is_sorted(p.grid_us.begin(), p.grid_us.end()));
  for (const auto& m : profiles.models)
    for (int b = 1; b <= p.N(); ++b)
      if (m.lat_us(b) <= 150000) CHECK(std::binary_search(p.grid_us.begin(), p.grid_us.end(), m.lat_us(b)));
  for (int s = 0; s < p.num_states(); ++s)
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
      const auto& act = p.actions[a];
      CHECK(act.batch == p.n_of(s));  // maximal batching
      if (act.meets_slo) CHECK(profiles.models[act.model].lat_us(act.batch) <= p.grid_us[p.j_of(s)]);
    }
  const auto out = lull::compiler::make_cpu_solver()->solve(p, {});
  CHECK(out.expected_accuracy > 0.7);
  CHECK(out.expected_violation_rate < 0.01);
}
