// The tracked expectation with the load window's lag (--expect-lag on): the
// (estimate, rate) pairs a trace gives, and a compiled policy evaluated at
// other rates.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "compiler/compile_sweep.h"
#include "compiler/lagged_mixture.h"
#include "compiler/solver/solver.h"
#include "test/support/golden_cases.h"

namespace {

// 100 QPS for 60 s, then 400 QPS for 60 s, evenly spaced.
std::vector<std::int64_t> step_trace() {
  std::vector<std::int64_t> t;
  for (std::int64_t x = 0; x < 60'000'000; x += 10'000) t.push_back(x);
  for (std::int64_t x = 60'000'000; x < 120'000'000; x += 2'500) t.push_back(x);
  return t;
}

// Poisson arrivals at 300 QPS for 60 s.
std::vector<std::int64_t> poisson_trace() {
  std::mt19937_64 rng(11);
  std::exponential_distribution<double> gap(300e-6);
  std::vector<std::int64_t> t;
  for (double x = gap(rng); x < 60e6; x += gap(rng)) t.push_back(static_cast<std::int64_t>(x));
  return t;
}

}  // namespace

TEST_CASE("served_load_pairs: the trailing estimate lags a rise the centred rate sees, a stationary rate stays put",
          "[lag]") {
  const auto pairs = lull::compiler::served_load_pairs(step_trace(), 10);
  double total = 0, lagging = 0, steady = 0;
  for (const auto& p : pairs) {
    total += p.share;
    if (p.estimate_qps < 0.9 * p.rate_qps) lagging += p.share;
    if (p.estimate_qps >= 0.95 * p.rate_qps && p.estimate_qps <= 1.05 * p.rate_qps) steady += p.share;
  }
  CHECK(total == Approx(1));
  // After the rise the window holds old arrivals for 500 ms (200 of the
  // 30,000 arrivals), and the rate, shrunk toward 5 s, rises from 2.5 s before.
  CHECK(lagging > 0.005);
  CHECK(lagging < 0.05);
  CHECK(steady > 0.9);
  // Stationary: the count's noise (8% over 500 ms at 300 QPS) is shrunk away.
  double near = 0;
  for (const auto& p : lull::compiler::served_load_pairs(poisson_trace(), 1))
    if (std::abs(p.rate_qps - 300) <= 20) near += p.share;
  CHECK(near > 0.97);  // unshrunk: about 0.6
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
