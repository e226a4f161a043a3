// compiler/solver/factored/pass_lanes.h: the CPU executor's pass tables,
// sixteen elements at a time, equal PassElement's (the one the CUDA executor
// runs) bit for bit on every entry: golden-sized problems, small and large
// K, both batchings, MD, and bursty arrivals.
#include <catch2/catch.hpp>
#include <cstring>

#include "compiler/solver/denormal_guard.h"
#include "compiler/solver/factored/cpu_exec.h"
#include "compiler/solver/factored/pipeline_tables.h"
#include "schema/arrival_process.h"
#include "test/support/golden_cases.h"
#include "test/support/skip.h"
#include "test/support/synthetic_profiles.h"

namespace {

using lull::compiler::Batching;
using lull::compiler::Discretization;
using lull::compiler::factored::CpuExec;

// The CPU executor with PassElement's pass tables.
struct ElementwiseCpuExec : CpuExec {
  static constexpr bool kPassLanes = false;
  ElementwiseCpuExec() : CpuExec(Threads::kNever) {}
};

void check_same_pass_tables(const lull::compiler::MdpProblem& p) {
  const lull::compiler::DenormalGuard flush_subnormals;
  CpuExec lanes_exec(CpuExec::Threads::kNever);
  ElementwiseCpuExec element_exec;
  const auto lanes = lull::compiler::factored::build_exec_tables(p, lanes_exec);
  const auto elements = lull::compiler::factored::build_exec_tables(p, element_exec);
  REQUIRE(lanes.pass.size() == elements.pass.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < lanes.pass.size(); ++i)
    differ += std::memcmp(&lanes.pass[i], &elements.pass[i], sizeof(double)) != 0;
  INFO(lanes.pass.size() << " entries, K = " << p.K() << ", N = " << lanes.d.N);
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("pass lanes: PassElement's tables bit for bit on golden-sized problems", "[compiler][solver][math]") {
  if (!CpuExec::kPassLanes)
    LULL_SKIP("this build runs PassElement on the CPU (no AVX-512 and FMA, not GCC, or a sanitizer build)");
  for (auto batching : {Batching::kMaximal, Batching::kVariable})
    for (int K : {60, 65, 100}) {
      auto o = lull::test::golden_profile_options(batching, Discretization::kFld);
      o.workers = K;
      o.load_qps = 2000 + 30 * K;
      INFO("K = " << K << " variable = " << (batching == Batching::kVariable));
      check_same_pass_tables(lull::compiler::build_mdp_problem(lull::test::linear_models(9, 32), o));
    }
}

TEST_CASE("pass lanes: PassElement's tables bit for bit on small problems and bursty arrivals",
          "[compiler][solver][math]") {
  if (!CpuExec::kPassLanes)
    LULL_SKIP("this build runs PassElement on the CPU (no AVX-512 and FMA, not GCC, or a sanitizer build)");
  for (int K : {1, 3, 7, 8, 9, 17, 25})
    for (auto disc : {Discretization::kFld, Discretization::kMd})
      for (double qps : {5.0, 45.0, 90.0}) {
        INFO("K = " << K << " md = " << (disc == Discretization::kMd) << " qps per worker " << qps);
        check_same_pass_tables(lull::compiler::build_mdp_problem(
            lull::test::linear_models(4, 8), lull::test::small_mdp_options(K, qps, 30, Batching::kMaximal, disc)));
      }
  for (const char* arrivals : {"gamma:3", "gamma:8", "batch:4"}) {
    auto o = lull::test::golden_profile_options(Batching::kMaximal, Discretization::kFld);
    o.arrivals = lull::parse_arrival_process(arrivals, "--arrivals");
    INFO(arrivals);
    check_same_pass_tables(lull::compiler::build_mdp_problem(lull::test::linear_models(9, 32), o));
  }
}
