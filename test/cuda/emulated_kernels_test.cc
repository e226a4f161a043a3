// The CUDA backend's kernel math, run on the host (HostExec), against the CPU
// backend: the factored tables element by element, and whole solves (actions
// in every state, expectations within 1e-9). These run without a GPU, so the
// device code's arithmetic and indexing are checked everywhere; what they
// cannot check is the launch machinery of device_exec.cuh.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "compiler/mdp/transition_tables.h"
#include "compiler/solver/cuda/emulated_solver.h"
#include "compiler/solver/cuda/host_exec.h"
#include "compiler/solver/cuda/pipeline_tables.h"
#include "test/cuda/golden_configs.h"
#include "test/cuda/small_problems.h"

namespace {

using lull::compiler::Batching;
using lull::compiler::Discretization;

// Largest |a - b| / max(1e-300, |a|) over entries where either is above 1e-200
// (deep-tail probabilities differ by whole ulps of their tiny selves).
double max_relative_diff(const std::vector<double>& a, const double* b, std::size_t n) {
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::fabs(a[i]) < 1e-200 && std::fabs(b[i]) < 1e-200) continue;
    worst = std::max(worst, std::fabs(a[i] - b[i]) / std::max(std::fabs(a[i]), std::fabs(b[i])));
  }
  return worst;
}

void check_tables(const lull::compiler::MdpProblem& p) {
  const auto cpu = lull::compiler::build_transition_tables(p);
  lull::compiler::cuda::HostExec ex;
  const auto dev = lull::compiler::cuda::build_exec_tables(p, ex);
  REQUIRE(dev.phase.size() == cpu.phase.size());
  REQUIRE(dev.pass.size() == cpu.pass.size() + cpu.tau_pass.size());
  REQUIRE(dev.kernel.size() == cpu.kernel.size() + cpu.tau_kernel.size());
  REQUIRE(dev.count_prob.size() == cpu.count_prob.size());
  CHECK(dev.tau_bucket == cpu.tau_bucket);
  CHECK(dev.layout.count_begin == cpu.count_begin);
  CHECK(max_relative_diff(cpu.phase, dev.phase.data(), cpu.phase.size()) <= 1e-12);
  CHECK(max_relative_diff(cpu.pass, dev.pass.data(), cpu.pass.size()) <= 1e-12);
  CHECK(max_relative_diff(cpu.tau_pass, dev.tau_pass(), cpu.tau_pass.size()) <= 1e-12);
  CHECK(max_relative_diff(cpu.kernel, dev.kernel.data(), cpu.kernel.size()) <= 1e-12);
  CHECK(max_relative_diff(cpu.tau_kernel, dev.tau_kernel(), cpu.tau_kernel.size()) <= 1e-12);
  CHECK(max_relative_diff(cpu.count_prob, dev.count_prob.data(), cpu.count_prob.size()) <= 1e-12);
}

}  // namespace

TEST_CASE("kernel math: the device tables equal the CPU's", "[cuda][emulated]") {
  for (int K : {1, 4, 25})
    for (auto disc : {Discretization::kFld, Discretization::kMd})
      for (auto batching : {Batching::kMaximal, Batching::kVariable}) {
        lull::compiler::MdpOptions o;
        o.slo_us = 60000;
        o.workers = K;
        o.load_qps = 45.0 * K;
        o.max_queue = 8;
        o.intervals = 30;
        o.discretization = disc;
        o.batching = batching;
        INFO("K=" << K << " md=" << (disc == Discretization::kMd) << " variable=" << (batching == Batching::kVariable));
        check_tables(lull::compiler::build_mdp_problem(lull::test::linear_models(4, 8), o));
      }
}

TEST_CASE("kernel math: a fallback slower than the SLO (service time > S)", "[cuda][emulated]") {
  // Model 0 at batch 8 takes 8000 + 3000 * 8 = 32 ms > 25 ms: the fallback misses for sure.
  lull::compiler::MdpOptions o;
  o.slo_us = 25000;
  o.workers = 3;
  o.load_qps = 300;
  o.max_queue = 8;
  o.intervals = 10;
  const auto p = lull::compiler::build_mdp_problem(lull::test::linear_models(2, 8), o);
  REQUIRE(p.taus_us.back() > o.slo_us);
  check_tables(p);
  const auto c = lull::test::compare_backends(p, lull::compiler::make_cpu_solver()->solve(p, {}),
                                              lull::compiler::make_emulated_cuda_solver()->solve(p, {}));
  INFO(c.first);
  CHECK(c.differing_not_tie == 0);
  CHECK(c.accuracy_diff <= 1e-9);
  CHECK(c.violation_diff <= 1e-9);
}

TEST_CASE("emulated CUDA pipeline: same actions and expectations as the CPU on every golden case",
          "[cuda][emulated][golden]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  auto cpu = lull::compiler::make_cpu_solver();
  auto emu = lull::compiler::make_emulated_cuda_solver();
  const auto cases = lull::test::golden_mdp_options();
  REQUIRE(cases.size() >= 7);
  for (const auto& o : cases) {
    const auto p = lull::compiler::build_mdp_problem(profiles, o);
    const auto a = cpu->solve(p, {});
    const auto b = emu->solve(p, {});
    const auto c = lull::test::compare_backends(p, a, b);
    INFO("K=" << o.workers << " load=" << o.load_qps << " first difference: " << c.first);
    CHECK(c.differing == 0);
    CHECK(c.accuracy_diff <= 1e-9);
    CHECK(c.violation_diff <= 1e-9);
    CHECK(c.max_value_diff <= 1e-9);
    CHECK(a.table_bytes == b.table_bytes);
    double l1 = 0;
    for (int s = 0; s < p.num_states(); ++s) l1 += std::fabs(a.stationary[s] - b.stationary[s]);
    CHECK(l1 <= 1e-9);
  }
}

TEST_CASE("emulated CUDA pipeline: variable batching and MD on the golden profiles", "[cuda][emulated]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  for (auto disc : {Discretization::kFld, Discretization::kMd})
    for (auto batching : {Batching::kMaximal, Batching::kVariable}) {
      lull::compiler::MdpOptions o;
      o.slo_us = 150000;
      o.workers = 60;
      o.load_qps = 2000;
      o.discretization = disc;
      o.batching = batching;
      const auto p = lull::compiler::build_mdp_problem(profiles, o);
      const auto c = lull::test::compare_backends(p, lull::compiler::make_cpu_solver()->solve(p, {}),
                                                  lull::compiler::make_emulated_cuda_solver()->solve(p, {}));
      INFO("md=" << (disc == Discretization::kMd) << " variable=" << (batching == Batching::kVariable) << ": "
                 << c.differing << " differing states, first: " << c.first);
      CHECK(c.differing_not_tie == 0);
      CHECK(c.accuracy_diff <= 1e-9);
      CHECK(c.violation_diff <= 1e-9);
    }
}

TEST_CASE("emulated CUDA pipeline: random small problems", "[cuda][emulated][random]") {
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
    const auto p = lull::compiler::build_mdp_problem(lull::test::linear_models(models(rng), o.max_queue), o);
    const auto c = lull::test::compare_backends(p, lull::compiler::make_cpu_solver()->solve(p, {}),
                                                lull::compiler::make_emulated_cuda_solver()->solve(p, {}));
    INFO("trial " << trial << ": K=" << o.workers << " N=" << o.max_queue << " D=" << o.intervals << " S="
                  << o.slo_us << " load=" << o.load_qps << " first difference: " << c.first);
    CHECK(c.differing_not_tie == 0);
    CHECK(c.accuracy_diff <= 1e-9);
    CHECK(c.violation_diff <= 1e-9);
  }
}
