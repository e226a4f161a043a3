// `lull plan --arrivals tracked:FILE` and the autoscaler with
// `--autoscale-rule envelope` on the same arrivals and a library compiled on
// the plan's own load grid: the count the planner prints is the count the
// autoscaler needs once its envelope holds the whole trace. Why: the unit test
// (count_rule_test.cc) checks the two sides on a hand-made library; this one
// runs the real planner (its grid, search and cached expectations) against
// the runtime's reading of a compiled library.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/policy_loader.h"
#include "runtime/manager/autoscaler.h"
#include "runtime/manager/capacity_table.h"
#include "test/support/cli_runner.h"
#include "test/support/plan_fixtures.h"
#include "test/support/shared_data.h"
#include "test/support/skip.h"

using namespace lull::test;

TEST_CASE("plan --arrivals tracked and --autoscale-rule envelope name the same count on one trace",
          "[plan][autoscale][count_rule]") {
  if (!have_artifact()) LULL_SKIP("no RAMSIS artifact under ../shared");
  // Poisson arrivals at 160 (1 + 0.5 sin(2 pi t / 20 s)) QPS for 60 s, by thinning.
  std::mt19937_64 rng(5);
  std::exponential_distribution<double> gap(1.5 * 160);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::int64_t> times_us;
  std::string text;
  char line[40];
  for (double t = gap(rng); t < 60; t += gap(rng))
    if (u(rng) * 1.5 < 1 + 0.5 * std::sin(2 * M_PI * t / 20)) {
      std::snprintf(line, sizeof line, "%.6f\n", t);
      text += line;
      times_us.push_back(std::llround(t * 1e6));
    }
  const std::string file = write_temp("count_rule_sin.txt", text), dir = temp_dir();
  const std::string image = "--profiles " + artifact_dir() + " --accuracy-percent " + accuracy_json() +
                            " --models shufflenet_v2_x0_5,mobilenet_v3_large,efficientnet_b0,efficientnet_b2,"
                            "efficientnet_b4,efficientnet_v2_m --slo-ms 150 --device cpu";
  auto r = run_lull("plan " + image + " --max-violation 0.01 --trace arrivals:" + file + " --out " + dir +
                    "/count_rule_plan.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string plan = slurp(dir + "/count_rule_plan.json");
  const int planned = static_cast<int>(json_number(plan, "workers"));
  const double step = json_number(plan, "grid_step_qps");
  REQUIRE(planned >= 2);
  REQUIRE(planned <= 8);
  // The short-range process the plan compiled each load for.
  const auto at = plan.find("\"short_range\": \"");
  REQUIRE(at != std::string::npos);
  const auto from = at + 16, to = plan.find('"', from);
  const std::string short_range = plan.substr(from, to - from);
  // The plan's grid over every count up to 10, past every estimate's grid load.
  std::ostringstream loads;
  loads << step << ":" << step * std::ceil(400 / step) << ":" << step;
  const std::string lib = dir + "/count_rule_lib.pb";
  r = run_lull("compile " + image + " --workers 1:10:1 --load-qps " + loads.str() + " --arrivals " + short_range +
               " --out " + lib);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  lull::manager::AutoscaleOptions o;
  o.lead_us = 120'000'000;  // the envelope holds the whole trace
  o.envelope_rule = true;
  lull::manager::Autoscaler a(
      lull::manager::CapacityTable(lull::core::load_policy_library(lib, {"", 0, 150}), {0.01, 0}), o, 0);
  for (auto t : times_us) a.record_arrival(t);
  lull::manager::PoolCounts up;
  up.up = 10;  // no safety-envelope trip
  CHECK(a.decide(61'000'000, up).need == planned);
}
