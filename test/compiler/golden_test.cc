// The compiler reproduces the reference implementation's numbers on the
// golden cases (../shared/golden/image_fld100_max.json).
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <tuple>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/solver/solver.h"
#include "schema/atomic_file.h"
#include "test/compiler/test_support.h"

namespace {

struct GoldenCase {
  int workers;
  double load_qps, slo_ms, accuracy, violation;
  std::map<std::pair<int, int>, std::pair<int, int>> policy;  // (n, j) -> (model, batch)
};

std::vector<GoldenCase> load_golden() {
  google::protobuf::Struct root;
  const auto text = lull::read_whole_file(lull::test::shared_dir() + "/golden/image_fld100_max.json");
  REQUIRE(google::protobuf::util::JsonStringToMessage(text, &root).ok());
  std::vector<GoldenCase> cases;
  for (const auto& c : root.fields().at("cases").list_value().values()) {
    const auto& f = c.struct_value().fields();
    const auto& cfg = f.at("config").struct_value().fields();
    const auto& exp = f.at("expected").struct_value().fields();
    GoldenCase g;
    g.workers = static_cast<int>(cfg.at("workers").number_value());
    g.load_qps = cfg.at("load_qps").number_value();
    g.slo_ms = cfg.at("slo_ms").number_value();
    g.accuracy = exp.at("accuracy").number_value();
    g.violation = exp.at("violation_rate").number_value();
    for (const auto& row : f.at("policy").list_value().values()) {
      const auto& r = row.list_value().values();
      g.policy[{static_cast<int>(r[0].number_value()), static_cast<int>(r[1].number_value())}] = {
          static_cast<int>(r[2].number_value()), static_cast<int>(r[3].number_value())};
    }
    cases.push_back(std::move(g));
  }
  return cases;
}

}  // namespace

TEST_CASE("golden cases: expectations and actions match the reference", "[compiler][golden]") {
  LULL_REQUIRE_ARTIFACT();
  const auto profiles = lull::test::golden_profiles();
  REQUIRE(profiles.models.size() == 9);
  for (std::size_t i = 0; i < 9; ++i) REQUIRE(profiles.models[i].name == lull::test::golden_models()[i]);
  auto solver = lull::compiler::make_cpu_solver();
  for (const auto& g : load_golden()) {
    lull::compiler::MdpOptions o;
    o.slo_us = g.slo_ms * 1000;
    o.workers = g.workers;
    o.load_qps = g.load_qps;
    const auto p = lull::compiler::build_mdp_problem(profiles, o);
    const auto out = solver->solve(p, {});
    INFO("case K=" << g.workers << " load=" << g.load_qps);
    INFO("ours: acc " << out.expected_accuracy << " viol " << out.expected_violation_rate << "; golden acc "
                      << g.accuracy << " viol " << g.violation);
    CHECK(std::fabs(out.expected_accuracy - g.accuracy) <= 0.002);
    const double dv = std::fabs(out.expected_violation_rate - g.violation);
    CHECK((dv <= 0.002 || (g.violation > 0.04 && dv <= 0.05 * g.violation)));
    // Actions: agreement weighted by the stationary distribution.
    double agree = 0, total = 0;
    int differing = 0;
    for (int s = p.state(1, 0); s < p.num_states(); ++s) {
      const auto& a = p.actions[out.choice[s]];
      const int n = p.n_of(s), j = p.j_of(s);
      const auto ref = g.policy.at({n, j});
      const bool same = ref.first == a.model && ref.second == a.batch;
      differing += !same;
      total += out.stationary[s];
      if (same) agree += out.stationary[s];
    }
    INFO("differing states (unweighted): " << differing << ", weighted agreement " << agree / total);
    CHECK(agree / total >= 0.99);
  }
}
