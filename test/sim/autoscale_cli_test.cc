// `lull policy library` and `lull simulate --autoscale` end to end: sets of
// two worker counts joined into a library, a run that scales out with its
// events in the result and the log, and bad autoscaler input as one line
// with exit code 2 and no result file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "schema/policy_file.h"
#include "test/support/runtime_test_support.h"
#include "test/sim/usage_error_check.h"
#include "test/support/cli_runner.h"

namespace {

using lull::test::CliResult;
using lull::test::run_lull;

// The tiny set for `workers`; with two workers its 200 QPS policy expects
// 5% violations, so at a 2% target two workers carry 100 QPS, four 200.
// `arrivals`: the pattern it is marked as compiled for ("": Poisson).
std::string tiny_set_file(int workers, const std::string& arrivals = "") {
  lull::schema::PolicySet set = lull::test::tiny_policy_set();
  set.set_workers(static_cast<unsigned>(workers));
  set.set_arrivals(arrivals);
  for (auto& p : *set.mutable_policies()) {
    p.mutable_inputs()->set_workers(static_cast<unsigned>(workers));
    p.mutable_inputs()->set_arrivals(arrivals);
    if (workers == 2 && p.inputs().load_qps() > 150) p.mutable_expected()->set_violation_rate(0.05);
  }
  const std::string path =
      lull::test::temp_dir() + "/tiny_w" + std::to_string(workers) + (arrivals.empty() ? "" : "_" + arrivals) + ".pb";
  lull::write_policy_set(set, path);
  return path;
}

std::string tiny_library() {
  const std::string lib = lull::test::temp_dir() + "/tiny_library.pb";
  const CliResult r = run_lull("policy library " + tiny_set_file(4) + " " + tiny_set_file(2) + " --out " + lib);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("2 worker counts (2..4)") != std::string::npos);
  return lib;
}

}  // namespace

TEST_CASE("lull policy library joins sets by worker count and refuses a repeated count", "[sim][cli][autoscale]") {
  const std::string lib = tiny_library();
  const auto read = lull::read_policy_library(lib);
  REQUIRE(read.sets_size() == 2);
  CHECK(read.sets(0).workers() == 2);  // ascending whatever the order given
  CHECK(read.sets(1).workers() == 4);
  const std::string twice = lull::test::temp_dir() + "/twice.pb";
  const CliResult r = run_lull("policy library " + tiny_set_file(2) + " " + tiny_set_file(2) + " --out " + twice);
  CHECK(r.exit_code == 2);
  CHECK(lull::test::count_lines(r.err) == 1);
  CHECK_FALSE(std::filesystem::exists(twice));
}

TEST_CASE("lull policy library counts worker counts and arrival patterns, not sets", "[sim][cli][arrivals]") {
  const std::string lib = lull::test::temp_dir() + "/tiny_pattern_library.pb";
  const CliResult r = run_lull("policy library " + tiny_set_file(4) + " " + tiny_set_file(2) + " " +
                               tiny_set_file(2, "gamma:4") + " --out " + lib);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("2 worker counts (2..4), 2 arrival patterns (poisson, gamma:4): 3 sets") != std::string::npos);
  const auto read = lull::read_policy_library(lib);
  REQUIRE(read.sets_size() == 3);
  CHECK(read.sets(0).workers() == 2);
  CHECK(read.sets(0).arrivals().empty());  // a count's patterns in the order given
  CHECK(read.sets(1).arrivals() == "gamma:4");
  CHECK(read.sets(2).workers() == 4);
  // One pattern, not Poisson: named.
  const CliResult g = run_lull("policy library " + tiny_set_file(2, "gamma:4") + " --out " + lib);
  CHECK(g.out.find("1 worker counts (2..2), 1 arrival pattern (gamma:4): 1 sets") != std::string::npos);
}

TEST_CASE("lull simulate --autoscale scales out and reports worker-seconds, workers over time and scale events",
          "[sim][cli][autoscale]") {
  const std::string lib = tiny_library(), out = lull::test::temp_dir() + "/autoscale.json",
                    log = lull::test::temp_dir() + "/autoscale.log";
  const CliResult r = run_lull("simulate --policies " + lib +
                               " --workers 2 --trace constant:150:20 --autoscale "
                               "--max-violation 0.02 --provisioning-delay fixed:3 --autoscale-forecast ewma:5 "
                               "--out " +
                               out + " --autoscale-log " + log);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string json = lull::test::slurp(out);
  for (const char* key :
       {"\"worker_seconds\": ", "\"workers_over_time\": [", "\"scale_events\": [",
        "\"action\": \"scale_out\", \"count\": 2, \"reason\": \"forecast\"", "\"forecast\": \"ewma:5\"",
        "\"provisioning\": \"fixed:3\"", "{\"workers\": 2, \"capacity_qps\": 100"})
    CHECK(json.find(key) != std::string::npos);
  const std::string lines = lull::test::slurp(log);
  CHECK(lull::test::count_lines(lines) >= 1);
  CHECK(lines.find("scale_out +2 reason=forecast need=4 up=2") != std::string::npos);
}

TEST_CASE("lull simulate --autoscale-objective price reaches the capacity table and the result",
          "[sim][cli][autoscale]") {
  // Both counts of the tiny library expect the same accuracy, so no price
  // buys accuracy with workers: the rule keeps the fewest that meet the target.
  const std::string lib = tiny_library(), out = lull::test::temp_dir() + "/autoscale_price.json";
  const CliResult r = run_lull("simulate --policies " + lib +
                               " --workers 2 --trace constant:150:20 --autoscale "
                               "--max-violation 0.02 --provisioning-delay fixed:3 --autoscale-objective price "
                               "--autoscale-worker-price 12.5 --out " +
                               out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string json = lull::test::slurp(out);
  CHECK(json.find("\"objective\": \"price\", \"worker_price\": 12.5") != std::string::npos);
  CHECK(json.find("\"reason\": \"forecast\"") != std::string::npos);  // 150 QPS needs 4 workers either way
}

TEST_CASE("lull simulate --autoscale-rule envelope: the planner's rule sets the need, named as the forecast",
          "[sim][cli][autoscale]") {
  const std::string lib = tiny_library(), out = lull::test::temp_dir() + "/autoscale_rule.json";
  const CliResult r = run_lull("simulate --policies " + lib +
                               " --workers 2 --trace constant:150:20 --autoscale --max-violation 0.02 "
                               "--provisioning-delay fixed:3 --autoscale-rule envelope --out " +
                               out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string json = lull::test::slurp(out);
  CHECK(json.find("\"forecast\": \"envelope:3.5s\"") != std::string::npos);  // lead 3 s + the 0.5 s window
  CHECK(json.find("\"reason\": \"forecast\"") != std::string::npos);         // 150 QPS needs 4 workers, not 2
}

TEST_CASE("lull simulate --autoscale: bad settings are one line, exit code 2, no result", "[sim][cli][autoscale]") {
  const std::string lib = tiny_library(), out = lull::test::temp_dir() + "/bad_autoscale.json";
  const std::string base =
      "simulate --policies " + lib + " --workers 2 --trace constant:150:5 --out " + out + " --autoscale ";
  const std::pair<const char*, const char*> cases[] = {
      {"--autoscale-forecast median:3", "forecast 'median:3'"},
      {"--provisioning-delay fixed:x", "provisioning delay 'fixed:x'"},
      {"--max-violation 1.5", "--max-violation"},
      {"--min-accuracy 1", "--min-accuracy"},
      {"--autoscale-envelope 1", "envelope '1'"},
      {"--autoscale-hysteresis -0.1", "--autoscale-hysteresis"},
      {"--min-workers 9", "floor (9 workers)"},
      {"--workers-at 3:2", "not with --fail"},
      {"--scheduler jellyfish", "lull only"},
      {"--autoscale-objective best", "--autoscale-objective: expected floor or price"},
      {"--autoscale-objective price", "needs --autoscale-worker-price"},
      {"--autoscale-worker-price 10", "only with --autoscale-objective price"},
      {"--autoscale-objective price --autoscale-worker-price -1", "--autoscale-worker-price"},
      {"--autoscale-rule peak", "--autoscale-rule: expected capacity or envelope"},
      {"--autoscale-rule envelope --autoscale-objective price --autoscale-worker-price 10",
       "only with --autoscale-objective floor"},
  };
  for (const auto& [flags, needle] : cases) lull::test::check_usage_error(base + flags, needle, out);
}
