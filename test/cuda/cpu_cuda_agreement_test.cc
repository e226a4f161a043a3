// On a machine with a GPU: the CUDA executor of the factored solver gives the
// CPU executor's actions in every state and its expectations within 1e-9, on
// every golden case. Without one, the tests say they are skipped (the same
// element functions run by the CPU executor are checked against the spec
// and the golden cases in test/compiler/solver and golden_test.cc).
#include <catch2/catch.hpp>
#include <cstdio>

#include "compiler/solver/solver_registry.h"
#include "test/support/golden_cases.h"
#include "test/support/backend_comparison.h"

#define LULL_SKIP_WITHOUT_GPU()                                                             \
  do {                                                                                      \
    std::string why;                                                                        \
    if (!lull::compiler::cuda_device_available(&why)) LULL_SKIP("no CUDA device: " << why); \
  } while (0)

TEST_CASE("CUDA matches the CPU backend on every golden case", "[cuda][golden][device]") {
  LULL_REQUIRE_ARTIFACT();
  LULL_SKIP_WITHOUT_GPU();
  const auto profiles = lull::test::golden_profiles();
  auto cpu = lull::compiler::make_cpu_solver();
  auto gpu = lull::compiler::make_solver("cuda", nullptr);
  REQUIRE(gpu->name() == "cuda");
  const auto cases = lull::test::golden_mdp_options();
  REQUIRE(cases.size() >= 7);
  for (const auto& o : cases) {
    const auto p = lull::compiler::build_mdp_problem(profiles, o);
    const auto a = cpu->solve(p, {});
    const auto b = gpu->solve(p, {});
    const auto c = lull::test::compare_backends(p, a, b);
    std::printf(
        "golden K=%d load=%g: %d differing states; accuracy %.12f vs %.12f, violations %.3g vs %.3g; "
        "cpu %.4f s, cuda %.4f s (build %.4f, solve %.4f, expect %.4f), device %.1f MB\n",
        o.workers, o.load_qps, c.differing, a.expected_accuracy, b.expected_accuracy, a.expected_violation_rate,
        b.expected_violation_rate, a.seconds.build + a.seconds.solve + a.seconds.expect,
        b.seconds.build + b.seconds.solve + b.seconds.expect, b.seconds.build, b.seconds.solve, b.seconds.expect,
        b.device_bytes / 1048576.0);
    INFO("K=" << o.workers << " load=" << o.load_qps << " first difference: " << c.first);
    CHECK(c.differing == 0);
    CHECK(c.accuracy_diff <= 1e-9);
    CHECK(c.violation_diff <= 1e-9);
    CHECK(c.max_value_diff <= 1e-9);
    CHECK(b.stationary_steps > 0);
  }
}

TEST_CASE("CUDA matches the CPU backend with variable batching and MD", "[cuda][device]") {
  LULL_REQUIRE_ARTIFACT();
  LULL_SKIP_WITHOUT_GPU();
  const auto profiles = lull::test::golden_profiles();
  auto cpu = lull::compiler::make_cpu_solver();
  auto gpu = lull::compiler::make_solver("cuda", nullptr);
  for (auto disc : {lull::compiler::Discretization::kFld, lull::compiler::Discretization::kMd})
    for (auto batching : {lull::compiler::Batching::kMaximal, lull::compiler::Batching::kVariable}) {
      const auto p = lull::compiler::build_mdp_problem(profiles, lull::test::golden_profile_options(batching, disc));
      const auto c = lull::test::compare_backends(p, cpu->solve(p, {}), gpu->solve(p, {}));
      INFO("md=" << (disc == lull::compiler::Discretization::kMd)
                 << " variable=" << (batching == lull::compiler::Batching::kVariable) << ": " << c.differing
                 << " differing states, first: " << c.first);
      CHECK(c.differing_not_tie == 0);  // floating-point ties may break either way
      CHECK(c.accuracy_diff <= 1e-9);
      CHECK(c.violation_diff <= 1e-9);
    }
}

TEST_CASE("CUDA matches the CPU backend on small hand-made problems", "[cuda][device]") {
  LULL_SKIP_WITHOUT_GPU();
  auto cpu = lull::compiler::make_cpu_solver();
  auto gpu = lull::compiler::make_solver("cuda", nullptr);
  for (int K : {1, 3, 20})
    for (auto batching : {lull::compiler::Batching::kMaximal, lull::compiler::Batching::kVariable}) {
      const auto o = lull::test::small_mdp_options(K, 40.0, 20, batching);
      const auto p = lull::compiler::build_mdp_problem(lull::test::linear_models(3, 8), o);
      const auto c = lull::test::compare_backends(p, cpu->solve(p, {}), gpu->solve(p, {}));
      INFO("K=" << K << " first difference: " << c.first);
      CHECK(c.differing_not_tie == 0);
      CHECK(c.accuracy_diff <= 1e-9);
    }
}
