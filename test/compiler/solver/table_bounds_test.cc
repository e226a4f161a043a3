// The factored solver against service times far beyond the SLO (an
// adversarial tester's finding): a latency of 2^32 s once overflowed the Poisson support's int
// and wrote past the pass-table rows (heap corruption); a large but
// representable one allocated hundreds of GB. The profile checks refuse such
// latencies before the solver (test/cli/input_limits_test.cc); these drive
// the solver directly, so its own guards are checked whatever a caller does.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "compiler/mdp/poisson.h"
#include "compiler/solver/denormal_guard.h"
#include "compiler/solver/factored/cpu_exec.h"
#include "compiler/solver/factored/pipeline_solve.h"
#include "test/support/synthetic_profiles.h"

namespace {

using lull::compiler::Batching;
using namespace lull::compiler::factored;

// linear_models(2, 8) with model 0's latency at batch 3 replaced by `us`.
lull::compiler::MdpProblem problem_with_latency(double us, Batching batching) {
  auto profiles = lull::test::linear_models(2, 8);
  profiles.models[0].latency_us[2] = us;
  return lull::compiler::build_mdp_problem(profiles, lull::test::small_mdp_options(2, 45.0, 30, batching));
}

lull::compiler::SolverOutput solve(const lull::compiler::MdpProblem& p) {
  const lull::compiler::DenormalGuard flush_subnormals;
  CpuExec ex(CpuExec::Threads::kNever);
  return solve_factored(p, {}, ex);
}

}  // namespace

TEST_CASE("poisson_support_end saturates instead of overflowing int", "[compiler][solver][limits]") {
  using lull::compiler::kPoissonSupportCap;
  using lull::compiler::poisson_support_end;
  CHECK(poisson_support_end(0) == 45);
  CHECK(poisson_support_end(100) == 285);
  CHECK(poisson_support_end(2.6e11) == kPoissonSupportCap);
  CHECK(poisson_support_end(1e300) == kPoissonSupportCap);
  CHECK(poisson_support_end(std::numeric_limits<double>::infinity()) == kPoissonSupportCap);
  CHECK(poisson_support_end(std::nan("")) == kPoissonSupportCap);
}

TEST_CASE("the solver refuses tables beyond memory with its estimate, before allocating",
          "[compiler][solver][limits]") {
  for (auto batching : {Batching::kMaximal, Batching::kVariable})
    for (double seconds : {4294967296.0, 1e9, 1e7}) {
      INFO("latency " << seconds << " s, variable batching " << (batching == Batching::kVariable));
      const auto p = problem_with_latency(seconds * 1e6, batching);
      try {
        solve(p);
        FAIL("solved with a " << seconds << " s service time");
      } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        CHECK(what.find("solver's tables would need about") != std::string::npos);
        CHECK(what.find(" GB") != std::string::npos);
      }
    }
}

TEST_CASE("the table estimate covers what a solve allocates", "[compiler][solver][limits]") {
  for (auto batching : {Batching::kMaximal, Batching::kVariable}) {
    const auto p = problem_with_latency(30000, batching);
    const auto out = solve(p);
    const auto layout = layout_actions(p);
    const double estimate = estimated_table_bytes(dims_of(p), layout);
    CHECK(estimate >= static_cast<double>(out.table_bytes));
    CHECK(estimate < 100.0 * static_cast<double>(out.table_bytes));
    CHECK_NOTHROW(check_table_memory(dims_of(p), layout));
    CHECK_THROWS_WITH(check_table_memory(dims_of(p), layout, estimate / 2), Catch::Contains("GB"));
  }
}
