// The factored solver run by the CPU executor (compiler/solver/factored):
// OpenMP threads change nothing (every element has one writer, so threaded
// and serial runs agree to the bit, on every golden case, with variable
// batching and MD, and on random small problems), and its tables are
// probability distributions on every kind of problem. These run the very
// element functions and index lists the CUDA kernels run, so the kernels'
// arithmetic and indexing are checked without a GPU; only the launch
// machinery of cuda/device_exec.cuh needs one (test/cuda).
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include "compiler/solver/denormal_guard.h"
#include "compiler/solver/factored/cpu_exec.h"
#include "compiler/solver/factored/pipeline_solve.h"
#include "compiler/solver/solver.h"
#include "test/support/factored_probe.h"
#include "test/support/golden_cases.h"
#include "test/support/synthetic_profiles.h"

namespace {

using lull::compiler::Batching;
using lull::compiler::Discretization;
using Threads = lull::compiler::factored::CpuExec::Threads;

lull::compiler::SolverOutput solve_with(const lull::compiler::MdpProblem& p, Threads threads) {
  const lull::compiler::DenormalGuard flush_subnormals;
  lull::compiler::factored::CpuExec ex(threads);
  return lull::compiler::factored::solve_factored(p, {}, ex);
}

// Threaded and single-threaded runs: the same numbers, bit for bit.
void check_threading_changes_nothing(const lull::compiler::MdpProblem& p) {
  const auto a = solve_with(p, Threads::kAlways);
  const auto b = solve_with(p, Threads::kNever);
  CHECK(a.choice == b.choice);
  CHECK(a.values == b.values);
  CHECK(a.stationary == b.stationary);
  CHECK(a.residual == b.residual);
  CHECK(a.stationary_steps == b.stationary_steps);
  CHECK(a.expected_accuracy == b.expected_accuracy);
  CHECK(a.expected_violation_rate == b.expected_violation_rate);
  CHECK(a.table_bytes == b.table_bytes);
}

}  // namespace

TEST_CASE("factored tables: every row and count distribution sums to 1 (FLD and MD, both batchings)",
          "[compiler][solver][math]") {
  for (int K : {1, 4, 25})
    for (auto disc : {Discretization::kFld, Discretization::kMd})
      for (auto batching : {Batching::kMaximal, Batching::kVariable}) {
        const auto o = lull::test::small_mdp_options(K, 45.0, 30, batching, disc);
        INFO("K=" << K << " md=" << (disc == Discretization::kMd) << " variable=" << (batching == Batching::kVariable));
        const auto p = lull::compiler::build_mdp_problem(lull::test::linear_models(4, 8), o);
        lull::test::FactoredProbe probe(p);
        const auto& t = probe.tables();
        for (int k = 0; k < t.d.taus; ++k) {
          CHECK(t.tau_bucket[k] >= 0);
          CHECK(t.tau_bucket[k] < p.J1() - 1);
        }
        for (int s = p.state(1, 0); s < p.num_states(); ++s) {
          double phase = 0;
          for (int q = 0; q < K; ++q) phase += t.phase[static_cast<std::size_t>(s) * K + q];
          REQUIRE(phase == Approx(1.0).epsilon(1e-12));
          for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
            INFO("state " << s << " action " << a);
            const auto row = probe.raw_row(s, a);
            double sum = 0;
            for (double v : row) {
              REQUIRE(v >= 0);
              sum += v;
            }
            REQUIRE(std::fabs(sum - 1.0) < 1e-9);
            if (!p.actions[a].partial()) continue;
            const auto& cb = t.layout.count_begin;
            double counts = 0;
            for (std::size_t i = cb[a]; i < cb[a + 1]; ++i) counts += t.count_prob[i];
            REQUIRE(std::fabs(counts - 1.0) < 1e-9);
          }
        }
      }
}

TEST_CASE("CPU executor: threads change nothing on every golden case", "[compiler][solver][golden][slow]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  const auto cases = lull::test::golden_mdp_options();
  REQUIRE(cases.size() >= 7);
  for (const auto& o : cases) {
    INFO("K=" << o.workers << " load=" << o.load_qps);
    check_threading_changes_nothing(lull::compiler::build_mdp_problem(profiles, o));
  }
}

TEST_CASE("CPU executor: threads change nothing with variable batching and MD on the golden profiles",
          "[compiler][solver][slow]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  for (auto disc : {Discretization::kFld, Discretization::kMd})
    for (auto batching : {Batching::kMaximal, Batching::kVariable}) {
      INFO("md=" << (disc == Discretization::kMd) << " variable=" << (batching == Batching::kVariable));
      check_threading_changes_nothing(
          lull::compiler::build_mdp_problem(profiles, lull::test::golden_profile_options(batching, disc)));
    }
}

TEST_CASE("CPU executor: threads change nothing on random small problems", "[compiler][solver][random][slow]") {
  const unsigned seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 12; ++trial) {
    std::uniform_int_distribution<int> models(1, 4), K(1, 12), N(1, 10), D(2, 40);
    std::uniform_real_distribution<double> slo_ms(30, 120), per_worker_qps(5, 60);
    lull::compiler::MdpOptions o;
    o.workers = K(rng);
    o.max_queue = N(rng);
    o.intervals = D(rng);
    o.slo_us = slo_ms(rng) * 1000;
    o.load_qps = per_worker_qps(rng) * o.workers;
    o.discretization = trial % 3 == 0 ? Discretization::kMd : Discretization::kFld;
    o.batching = trial % 2 ? Batching::kVariable : Batching::kMaximal;
    INFO("trial " << trial << ": K=" << o.workers << " N=" << o.max_queue << " D=" << o.intervals << " S=" << o.slo_us
                  << " load=" << o.load_qps);
    check_threading_changes_nothing(
        lull::compiler::build_mdp_problem(lull::test::linear_models(models(rng), o.max_queue), o));
  }
}

TEST_CASE("a cancelled solve throws SolveCancelled, an uncancelled one is unchanged", "[compiler][solver]") {
  lull::compiler::MdpOptions o;
  o.workers = 2;
  o.max_queue = 6;
  o.intervals = 12;
  o.slo_us = 60000;
  o.load_qps = 40;
  const auto p = lull::compiler::build_mdp_problem(lull::test::linear_models(2, o.max_queue), o);
  const auto plain = solve_with(p, Threads::kAuto);
  std::atomic<bool> cancel{false};
  lull::compiler::SolveOptions options;
  options.cancel = &cancel;
  for (const Threads threads : {Threads::kNever, Threads::kAlways}) {
    lull::compiler::factored::CpuExec ex(threads);
    ex.cancel_on(&cancel);
    const auto same = lull::compiler::factored::solve_factored(p, options, ex);  // the flag unset: the same numbers
    CHECK(same.values == plain.values);
    CHECK(same.choice == plain.choice);
    CHECK(same.stationary == plain.stationary);
  }
  cancel = true;
  for (const Threads threads : {Threads::kNever, Threads::kAlways}) {
    lull::compiler::factored::CpuExec ex(threads);
    ex.cancel_on(&cancel);
    CHECK_THROWS_AS(lull::compiler::factored::solve_factored(p, options, ex), lull::compiler::SolveCancelled);
    std::vector<int> touched(100, 0);
    CHECK_THROWS_AS(ex.for_each(touched.size(), [&](std::size_t i) { touched[i] = 1; }),
                    lull::compiler::SolveCancelled);
    CHECK(std::count(touched.begin(), touched.end(), 1) == 0);  // set before the loop: no element ran
  }
  CHECK_THROWS_AS(lull::compiler::make_cpu_solver()->solve(p, options), lull::compiler::SolveCancelled);
}
