// The compiler reproduces the reference implementation's numbers on the
// golden cases (../shared/golden/image_fld100_max.json).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/solver/solver.h"
#include "test/support/shared_data.h"
#include "test/support/golden_cases.h"

TEST_CASE("golden cases: expectations and actions match the reference", "[compiler][golden]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  REQUIRE(profiles.models.size() == 9);
  for (std::size_t i = 0; i < 9; ++i) REQUIRE(profiles.models[i].name == lull::test::golden_models()[i]);
  auto solver = lull::compiler::make_cpu_solver();
  for (const auto& g : lull::test::golden_records()) {
    std::map<std::pair<int, int>, std::pair<int, int>> reference;  // (n, j) -> (model, batch)
    for (const auto& r : g.policy) reference[{r.n, r.j}] = {r.model, r.batch};
    const auto p = lull::compiler::build_mdp_problem(profiles, lull::test::golden_mdp_options(g));
    const auto out = solver->solve(p, {});
    INFO("case K=" << g.workers << " load=" << g.load_qps);
    INFO("ours: acc " << out.expected_accuracy << " viol " << out.expected_violation_rate << "; golden acc "
                      << g.accuracy << " viol " << g.violation_rate);
    CHECK(std::fabs(out.expected_accuracy - g.accuracy) <= 0.002);
    const double dv = std::fabs(out.expected_violation_rate - g.violation_rate);
    CHECK((dv <= 0.002 || (g.violation_rate > 0.04 && dv <= 0.05 * g.violation_rate)));
    // Actions: agreement weighted by the stationary distribution.
    double agree = 0, total = 0;
    int differing = 0;
    for (int s = p.state(1, 0); s < p.num_states(); ++s) {
      const auto& a = p.actions[out.choice[s]];
      const int n = p.n_of(s), j = p.j_of(s);
      const auto ref = reference.at({n, j});
      const bool same = ref.first == a.model && ref.second == a.batch;
      differing += !same;
      total += out.stationary[s];
      if (same) agree += out.stationary[s];
    }
    INFO("differing states (unweighted): " << differing << ", weighted agreement " << agree / total);
    CHECK(agree / total >= 0.99);
  }
}
