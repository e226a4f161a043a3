// The MDP's options: MD slack grid, variable batching, and the CLI's --help.
#include <catch2/catch.hpp>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/mdp/slack_grid.h"
#include "compiler/profile/profile_reduction.h"
#include "compiler/solver/solver.h"
#include "schema/profile_file.h"
#include "test/support/cli_runner.h"

using namespace lull::compiler;

namespace {
ReducedProfiles tiny(int N) {
  return reduce_profiles(lull::read_profile_set_json(std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json"),
                         ReductionOptions{}, N, "tiny");
}
}  // namespace

TEST_CASE("MD grid: 0, every profiled latency within the SLO, and the SLO", "[compiler][mdp]") {
  const auto prof = tiny(8);
  const double slo = 30000;
  const auto grid = md_grid_us(slo, prof.models, 8);
  CHECK(grid.front() == 0);
  CHECK(grid.back() == slo);
  for (std::size_t i = 1; i < grid.size(); ++i) CHECK(grid[i] > grid[i - 1]);
  int expected_points = 0;
  for (const auto& m : prof.models)
    for (int b = 1; b <= 8; ++b)
      if (m.lat_us(b) <= slo) {
        ++expected_points;
        CHECK(std::find(grid.begin(), grid.end(), m.lat_us(b)) != grid.end());
      }
  CHECK(static_cast<int>(grid.size()) <= expected_points + 2);
  CHECK(slack_index(grid, -5) == 0);
  CHECK(slack_index(grid, slo) == static_cast<int>(grid.size()) - 1);
}

TEST_CASE("MD policies meet the SLO whenever some model can", "[compiler][mdp]") {
  MdpOptions o;
  o.slo_us = 30000;
  o.workers = 2;
  o.load_qps = 80;
  o.max_queue = 8;
  o.discretization = Discretization::kMd;
  const auto p = build_mdp_problem(tiny(8), o);
  const auto out = make_cpu_solver()->solve(p, {});
  for (int s = p.state(1, 0); s < p.full_state(); ++s) {
    bool any_meets = false;
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) any_meets |= p.actions[a].meets_slo;
    if (any_meets) CHECK(p.actions[out.choice[s]].meets_slo);
  }
  CHECK(out.expected_accuracy > 0.6);
}

TEST_CASE("variable batching: batches never exceed the queue, and accuracy is not below maximal's", "[compiler][mdp]") {
  MdpOptions o;
  o.slo_us = 40000;
  o.workers = 2;
  o.load_qps = 150;
  o.max_queue = 8;
  o.intervals = 40;
  const auto prof = tiny(8);
  const auto maximal = make_cpu_solver()->solve(build_mdp_problem(prof, o), {});
  o.batching = Batching::kVariable;
  const auto p = build_mdp_problem(prof, o);
  const auto variable = make_cpu_solver()->solve(p, {});
  int partial = 0;
  for (int s = p.state(1, 0); s < p.num_states(); ++s) {
    const auto& a = p.actions[variable.choice[s]];
    CHECK(a.batch <= p.n_of(s));
    CHECK(a.batch >= 1);
    partial += a.partial();
  }
  INFO("maximal " << maximal.expected_accuracy << " variable " << variable.expected_accuracy << ", partial states "
                  << partial);
  CHECK(variable.expected_accuracy >= maximal.expected_accuracy - 1e-3);
  CHECK(variable.expected_violation_rate <= maximal.expected_violation_rate + 1e-3);
}

TEST_CASE("every subcommand answers --help", "[cli][process]") {
  for (const char* cmd : {"compile", "profiles import", "policy show", "policy dump", "bench compile"}) {
    const auto r = lull::test::run_lull(std::string(cmd) + " --help");
    INFO(cmd);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("--") != std::string::npos);
  }
  const auto top = lull::test::run_lull("--help");
  CHECK(top.exit_code == 0);
  CHECK(top.out.find("policy show") != std::string::npos);
  CHECK(lull::test::run_lull("frobnicate").exit_code == 2);
}
