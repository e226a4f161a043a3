// lull plan at fleet scale through the binary (docs/user-guide.md, "Large
// fleets"): 100,000 QPS on the image task plans about 1,760 workers with the
// default phase cap, from a few dozen compiles of the cap's problem; without
// a cap the search stops at 1000 workers and says so in one line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "test/support/cli_runner.h"
#include "test/support/shared_data.h"

using namespace lull;
using namespace lull::test;
using Catch::Contains;

namespace {

std::string image_plan(const std::string& extra) {
  std::string models;
  for (const auto& m : golden_models()) models += (models.empty() ? "" : ",") + m;
  return "plan --profiles " + artifact_dir() + " --accuracy-percent " + accuracy_json() + " --models " + models +
         " --slo-ms 150 --max-violation 0.01 " + extra;
}

double number_after(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": ?([0-9.eE+-]+)");
  REQUIRE(std::regex_search(json, m, re));
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("lull plan at 100,000 QPS: one command, a few dozen capped compiles", "[artifact]") {
  LULL_REQUIRE_ARTIFACT();
  const std::string out = temp_dir() + "/plan_100k.json";
  const auto r = run_lull(image_plan("--load-qps 100000 --out " + out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("--phase-cap 240"));
  const std::string json = slurp(out);
  // The cap's capacity per worker (experiments/results/fleet_scale.md): about 56.8 QPS.
  const double workers = number_after(json, "workers");
  CHECK(workers >= 1700);
  CHECK(workers <= 1800);
  CHECK(number_after(json, "phase_cap") == 240);
  CHECK(number_after(json, "max_workers") == 100000);
  CHECK(number_after(json, "policies_compiled") <= 60);
}

TEST_CASE("lull plan at 100,000 QPS without a cap: refused in one line at the exact search's limit", "[artifact]") {
  LULL_REQUIRE_ARTIFACT();
  const std::string out = temp_dir() + "/plan_100k_exact.json";
  std::filesystem::remove(out);
  const auto r = run_lull(image_plan("--load-qps 100000 --phase-cap 0 --out " + out));
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(count_lines(r.err) == 1);
  CHECK_THAT(r.err, Contains("no worker count up to 1000"));
  CHECK_FALSE(std::filesystem::exists(out));
}
