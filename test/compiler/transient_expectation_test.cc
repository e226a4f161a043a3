// `--expect-lag transient`: one worker's state distribution followed through
// a trace, decision by decision (compiler/transient_expectation.h), and the
// fixed-policy step it takes (PolicySteps).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "compiler/compile_sweep.h"
#include "compiler/lagged_mixture.h"
#include "compiler/solver/solver.h"
#include "compiler/transient_expectation.h"
#include "test/support/golden_cases.h"

namespace {

using namespace lull::compiler;

std::vector<std::int64_t> poisson_trace(double qps, double seconds, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(qps * 1e-6);
  std::vector<std::int64_t> t;
  for (double x = gap(rng); x < seconds * 1e6; x += gap(rng)) t.push_back(static_cast<std::int64_t>(x));
  return t;
}

LibrarySweep sweep_at(CompileSpec& spec, std::vector<double> loads) {
  spec.mdp = lull::test::golden_profile_options(Batching::kMaximal, Discretization::kFld);
  spec.mdp.workers = 8;
  spec.loads_qps = std::move(loads);
  auto cpu = make_cpu_solver();
  LibrarySweep sweep;
  sweep.workers = 8;
  sweep.sweep = run_sweep({lull::test::golden_profiles(), spec}, *cpu);
  return sweep;
}

}  // namespace

TEST_CASE("PolicySteps: stepping a policy from the empty state reaches the power iteration's distribution",
          "[lag][golden]") {
  LULL_REQUIRE_ARTIFACT();
  auto o = lull::test::golden_profile_options(Batching::kMaximal, Discretization::kFld);
  o.workers = 8;
  o.load_qps = 300;
  const auto problem = build_mdp_problem(lull::test::golden_profiles(), o);
  auto cpu = make_cpu_solver();
  SolveOptions opt;
  const auto solved = cpu->solve(problem, opt);
  const auto reference = evaluate_policies(problem, {solved.choice}, opt, true)[0];
  PolicySteps steps(problem);
  const int id = steps.add(solved.choice);
  std::vector<double> p(static_cast<std::size_t>(problem.num_states()), 0), next;
  p[static_cast<std::size_t>(problem.state(0, 0))] = 1;
  for (int i = 0; i < reference.stationary_steps; ++i) {
    steps.step(id, p, next);
    p.swap(next);
  }
  double total = 0, off = 0;
  for (std::size_t s = 0; s < p.size(); ++s) {
    total += p[s];
    off += std::abs(p[s] - reference.stationary[s]);
  }
  CHECK(total == Approx(1).margin(1e-12));
  CHECK(off < 1e-12);
  CHECK_THROWS(steps.step(id + 1, p, next));
}

TEST_CASE("transient_expectation: on stationary traffic the followed queue gives the compiled expectation",
          "[lag][golden]") {
  LULL_REQUIRE_ARTIFACT();
  CompileSpec spec;
  const auto sweep = sweep_at(spec, {340});
  const auto& compiled = sweep.sweep.reports[0];
  // 340 QPS Poisson for 120 s, one policy: the chain follows the realised
  // rate around each decision (its noise shrunk away) from an empty queue.
  const auto t = poisson_trace(340, 120, 5);
  TransientStats stats;
  const auto m = transient_expectation(lull::test::golden_profiles(), spec, sweep, t, 1, 1, false, &stats);
  INFO("compiled " << compiled.expected_accuracy << " / " << compiled.expected_violation_rate << ", transient "
                   << m.accuracy << " / " << m.violation << "; " << stats.decisions << " decisions");
  CHECK(m.violation == Approx(compiled.expected_violation_rate).margin(0.001));
  CHECK(m.accuracy == Approx(compiled.expected_accuracy).margin(0.002));
  // The decisions' time accounting: the chain serves what the worker receives.
  CHECK(stats.served_per_worker == Approx(static_cast<double>(t.size()) / 8).epsilon(0.03));
  CHECK(stats.rates >= 1);
  // Counting only late queries can only lower the violation.
  const auto late = transient_expectation(lull::test::golden_profiles(), spec, sweep, t, 1, 1, true);
  CHECK(late.violation <= m.violation + 1e-12);
  CHECK_THROWS_AS(transient_expectation(lull::test::golden_profiles(), spec, sweep, {1}, 1, 1, false),
                  std::invalid_argument);
}

TEST_CASE("transient_expectation: a memory budget drops and rebuilds rates without changing the figures",
          "[lag][golden]") {
  LULL_REQUIRE_ARTIFACT();
  CompileSpec spec;
  const auto sweep = sweep_at(spec, {250, 340, 430});
  // 40 s at 250 QPS, then 40 s at 430: rates come and go.
  auto t = poisson_trace(250, 40, 7);
  for (std::int64_t x : poisson_trace(430, 40, 8)) t.push_back(x + 40'000'000);
  TransientStats kept, squeezed;
  const auto all = transient_expectation(lull::test::golden_profiles(), spec, sweep, t, 1, 1, true, &kept);
  const auto small = transient_expectation(lull::test::golden_profiles(), spec, sweep, t, 1, 1, true, &squeezed, 1);
  INFO(kept.rates << " rates built with the default budget, " << squeezed.rates << " with 1 byte");
  CHECK(kept.evicted == 0);
  CHECK(squeezed.evicted > 0);
  CHECK(squeezed.rates > kept.rates);
  CHECK(small.violation == Approx(all.violation).margin(1e-12));
  CHECK(small.accuracy == Approx(all.accuracy).margin(1e-12));
  CHECK(squeezed.decisions == kept.decisions);
}

TEST_CASE("age_mid_cell: the earliest query's age at its cell's middle expects fewer misses at overload",
          "[lag][golden]") {
  LULL_REQUIRE_ARTIFACT();
  auto o = lull::test::golden_profile_options(Batching::kMaximal, Discretization::kFld);
  o.workers = 8;
  o.load_qps = 420;  // past what 8 workers carry at 1%
  const auto spec_problem = build_mdp_problem(lull::test::golden_profiles(), o);
  auto cpu = make_cpu_solver();
  SolveOptions opt;
  const auto solved = cpu->solve(spec_problem, opt);
  o.age_mid_cell = true;
  const auto mid_problem = build_mdp_problem(lull::test::golden_profiles(), o);
  // The same states and actions: only the phase rows differ.
  REQUIRE(mid_problem.num_states() == spec_problem.num_states());
  REQUIRE(mid_problem.actions.size() == spec_problem.actions.size());
  const auto spec_eval = evaluate_policies(spec_problem, {solved.choice}, opt)[0];
  const auto mid_eval = evaluate_policies(mid_problem, {solved.choice}, opt)[0];
  INFO("spec " << spec_eval.expected_violation_rate << ", mid " << mid_eval.expected_violation_rate);
  CHECK(spec_eval.expected_violation_rate == Approx(solved.expected_violation_rate).margin(1e-9));
  CHECK(mid_eval.expected_violation_rate < spec_eval.expected_violation_rate - 1e-4);
}
