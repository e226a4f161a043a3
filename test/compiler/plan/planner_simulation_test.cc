// "The planner is right" on the real profiles: for a sample of
// loads, the planned worker count's SIMULATED violation rate (lull simulate,
// the policy compiled for that count, a Poisson trace at that load) is at
// most the target plus 0.5 points, and with one worker fewer the compiler's
// expected violation exceeds the target (an independent lull compile).
// Image task (9 models, SLO 150 ms) and text task (5 BERT models, SLO 100 ms).
#include <catch2/catch.hpp>

#include <filesystem>

#include "test/support/cli_runner.h"
#include "test/support/plan_fixtures.h"
#include "test/support/shared_data.h"

using namespace lull::test;

namespace {

struct Task {
  std::string profiles, accuracy, models, slo_ms;
  std::vector<double> loads;
};

void check_task(const Task& t, const std::string& tag) {
  const double target = 0.01;
  const std::string inputs = "--profiles " + t.profiles + " --accuracy-percent " + t.accuracy +
                             (t.models.empty() ? "" : " --models " + t.models) + " --slo-ms " + t.slo_ms +
                             " --device cpu";
  for (double load : t.loads) {
    const std::string l = std::to_string(static_cast<int>(load));
    const std::string plan = temp_dir() + "/" + tag + "_plan_" + l + ".json";
    auto r =
        run_lull("plan " + inputs + " --max-violation 0.01 --load-qps " + l + " --capacity-workers 1 --out " + plan);
    INFO(tag << " at " << l << " QPS: " << r.err);
    REQUIRE(r.exit_code == 0);
    const int k = static_cast<int>(json_number(slurp(plan), "workers"));
    REQUIRE(k >= 1);
    // The planned count, simulated.
    const std::string pb = temp_dir() + "/" + tag + "_k.pb", sim = temp_dir() + "/" + tag + "_sim.json";
    r = run_lull("compile " + inputs + " --workers " + std::to_string(k) + " --load-qps " + l + " --out " + pb);
    REQUIRE(r.exit_code == 0);
    r = run_lull("simulate --policies " + pb + " --workers " + std::to_string(k) + " --trace constant:" + l +
                 ":60 --seed 1 --out " + sim);
    REQUIRE(r.exit_code == 0);
    const double simulated = json_number(slurp(sim), "violation_rate");
    INFO("planned " << k << " workers; simulated violation " << simulated);
    CHECK(simulated <= target + 0.005);
    // One fewer: the compiler expects the target broken (or the load is beyond its capacity).
    if (k > 1) {
      const std::string report = temp_dir() + "/" + tag + "_fewer.json";
      r = run_lull("compile " + inputs + " --workers " + std::to_string(k - 1) + " --load-qps " + l + " --out " + pb +
                   " --report " + report);
      REQUIRE(r.exit_code == 0);
      const std::string rep = slurp(report);
      const bool beyond = rep.find("\"beyond_capacity\": \"yes\"") != std::string::npos;
      INFO("one fewer: " << rep.substr(rep.find("\"policies\"")));
      CHECK((beyond || json_number(rep, "expected_violation_rate") > target));
    }
  }
}

}  // namespace

TEST_CASE("planner: the planned count holds in simulation and one fewer breaks the target (image)") {
  LULL_REQUIRE_ARTIFACT();
  check_task({artifact_dir(),
              accuracy_json(),
              "shufflenet_v2_x0_5,mobilenet_v3_large,efficientnet_b0,efficientnet_b2,efficientnet_b3,"
              "efficientnet_b4,efficientnet_v2_s,efficientnet_v2_m,efficientnet_v2_l",
              "150",
              {900, 2100, 3300}},
             "image");
}

TEST_CASE("planner: the planned count holds in simulation and one fewer breaks the target (text)") {
  const std::string dir = shared_dir() + "/ramsis-artifact/profiles/text_cloud_cpu";
  const std::string acc = shared_dir() + "/ramsis-artifact/text_accuracy.json";
  LULL_REQUIRE_SHARED_DATA(lull::test::have_text_artifact(), "ramsis-artifact/ (text profiles and accuracies)");
  check_task({dir, acc, "", "100", {2000, 6000}}, "text");
}
