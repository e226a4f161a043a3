// The tracked expectation with the load window's lag (--expect-lag on): the
// (estimate, rate) pairs a trace gives, and a compiled policy evaluated at
// other rates.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "compiler/compile_sweep.h"
#include "compiler/lagged_mixture.h"
#include "compiler/solver/solver.h"
#include "test/support/golden_cases.h"

namespace {

// 100 QPS for 10 s, then 400 QPS for 10 s, evenly spaced.
std::vector<std::int64_t> step_trace() {
  std::vector<std::int64_t> t;
  for (std::int64_t x = 0; x < 10'000'000; x += 10'000) t.push_back(x);
  for (std::int64_t x = 10'000'000; x < 20'000'000; x += 2'500) t.push_back(x);
  return t;
}

}  // namespace

TEST_CASE("served_load_pairs: the trailing estimate lags a rise the centred rate sees", "[lag]") {
  const auto pairs = lull::compiler::served_load_pairs(step_trace(), 10);
  double total = 0, lagging = 0, steady = 0;
  for (const auto& p : pairs) {
    total += p.share;
    if (p.estimate_qps < 0.9 * p.rate_qps) lagging += p.share;
    if (p.estimate_qps >= 0.95 * p.rate_qps && p.estimate_qps <= 1.05 * p.rate_qps) steady += p.share;
  }
  CHECK(total == Approx(1));
  // After the rise the window holds old arrivals for 500 ms: 200 of the
  // 5000 arrivals, plus the 250 ms before it where the centred window rises.
  CHECK(lagging > 0.02);
  CHECK(lagging < 0.06);
  CHECK(steady > 0.9);
  CHECK_THROWS_AS(lull::compiler::served_load_pairs({}, 10), std::invalid_argument);
  CHECK_THROWS_AS(lull::compiler::served_load_pairs(step_trace(), 0), std::invalid_argument);
}

TEST_CASE("lagged_mixture: a policy at its own rate keeps its expectation, at a higher one it misses more",
          "[lag][golden]") {
  LULL_REQUIRE_ARTIFACT();
  lull::compiler::CompileSpec spec;
  spec.mdp =
      lull::test::golden_profile_options(lull::compiler::Batching::kMaximal, lull::compiler::Discretization::kFld);
  spec.mdp.workers = 8;
  spec.loads_qps = {150, 200};
  auto cpu = lull::compiler::make_cpu_solver();
  lull::compiler::LibrarySweep sweep;
  sweep.workers = 8;
  sweep.sweep = lull::compiler::run_sweep({lull::test::golden_profiles(), spec}, *cpu);
  const auto& low = sweep.sweep.reports[0];
  const auto own = lull::compiler::lagged_mixture(lull::test::golden_profiles(), spec, sweep, {{150, 150, 1.0}});
  CHECK(own.violation == Approx(low.expected_violation_rate).margin(1e-12));
  CHECK(own.accuracy == Approx(low.expected_accuracy).margin(1e-12));
  // The 150 QPS policy at 200 QPS: evaluated, not the compiled figure.
  const auto lagging = lull::compiler::lagged_mixture(lull::test::golden_profiles(), spec, sweep, {{150, 200, 1.0}});
  CHECK(lagging.violation > low.expected_violation_rate);
  // Its own states and actions: the policy's choices are found again.
  auto o = spec.mdp;
  o.load_qps = 200;
  const auto problem = lull::compiler::build_mdp_problem(lull::test::golden_profiles(), o);
  const auto choice = lull::compiler::choice_of(problem, sweep.sweep.set.policies(1));
  const auto again = lull::compiler::evaluate_policies(problem, {choice}, spec.solve);
  CHECK(again[0].expected_violation_rate == Approx(sweep.sweep.reports[1].expected_violation_rate).margin(1e-9));
  auto other = spec.mdp;
  other.max_queue = 16;
  CHECK_THROWS_AS(lull::compiler::choice_of(lull::compiler::build_mdp_problem(lull::test::golden_profiles(), other),
                                            sweep.sweep.set.policies(1)),
                  std::invalid_argument);
}
