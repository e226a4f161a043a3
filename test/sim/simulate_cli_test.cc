// `lull simulate` end to end: a good run writes a complete result; bad input
// gives one line on stderr and exit code 2.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "schema/atomic_file.h"
#include "schema/policy_file.h"
#include "test/support/runtime_test_support.h"
#include "test/support/cli_runner.h"

namespace {

using Outcome = lull::test::CliOutcome;

Outcome run_lull(const std::string& args) { return lull::test::run_cli(std::string(LULL_BINARY) + " " + args); }

std::string dir() {
  const auto d = std::filesystem::temp_directory_path() / "lull_runtime_cli";
  std::filesystem::create_directories(d);
  return d.string();
}

std::string tiny_policies() {
  const std::string path = dir() + "/tiny.pb";
  lull::write_policy_set(lull::test::tiny_policy_set(), path);
  return path;
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void expect_usage_error(const std::string& args, const std::string& needle) {
  const Outcome o = run_lull("simulate " + args);
  INFO("lull simulate " << args << "\n" << o.output);
  CHECK(o.code == 2);
  CHECK(lines(o.output) == 1);
  CHECK(o.output.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("lull simulate writes a result with every query accounted for", "[sim][cli]") {
  const std::string out = dir() + "/result.json", timeline = dir() + "/timeline.csv";
  std::filesystem::remove(out);
  const Outcome o = run_lull("simulate --policies " + tiny_policies() +
                             " --workers 2 --trace constant:150:10 --seed 3 --out " + out + " --timeline " + timeline);
  INFO(o.output);
  REQUIRE(o.code == 0);
  const std::string json = lull::read_whole_file(out);
  for (const char* key : {"\"queries\"", "\"accuracy_per_satisfied_query\"", "\"violation_rate\"", "\"dropped\": 0",
                          "\"wall_s\"", "\"expected_accuracy\"", "\"policies_used\""})
    CHECK(json.find(key) != std::string::npos);
  const std::string csv = lull::read_whole_file(timeline);
  CHECK(lines(csv) >= 10);  // header + one row per simulated second
  CHECK(run_lull("simulate --help").code == 0);
}

TEST_CASE("lull simulate --replay reference: 300 s wrapping replay, queued queries counted apart", "[sim][cli]") {
  const std::string out = dir() + "/replay.json", rates = dir() + "/rates.txt";
  std::ofstream(rates) << "0 100\n10 1000\n";  // second 10 (1000 QPS) lasts 1 s, period 11 s
  std::filesystem::remove(out);
  const Outcome o = run_lull("simulate --policies " + tiny_policies() + " --workers 2 --trace rate-file:" + rates +
                             " --replay reference --scheduler modelswitching --ms-profile-s 5 --seed 2 --out " + out);
  INFO(o.output);
  REQUIRE(o.code == 0);
  CHECK(o.output.find("not dispatched at end") != std::string::npos);
  const std::string json = lull::read_whole_file(out);
  for (const char* key : {"\"replay\": \"reference\"", "\"not_dispatched_at_end\"", "\"model_switching_offline\""})
    CHECK(json.find(key) != std::string::npos);
  // 27 periods of 10 * 100 + 1000 QPS, then seconds 0..2: about 54,300 queries.
  const auto at = json.find("\"queries\": ");
  REQUIRE(at != std::string::npos);
  const double queries = std::stod(json.substr(at + 11));
  CHECK(std::abs(queries - 54'300) < 5 * std::sqrt(54'300.0));
}

TEST_CASE("lull simulate: bad input is one line and exit code 2", "[sim][cli]") {
  const std::string pol = tiny_policies(), out = " --out " + dir() + "/bad.json";
  const std::string bad_trace = dir() + "/bad_trace.txt";
  std::ofstream(bad_trace) << "0 100\n10 lots\n";
  expect_usage_error("--policies " + pol + " --workers 2 --trace rate-file:" + bad_trace + out, "bad_trace.txt:2");
  expect_usage_error("--policies " + pol + " --workers 60 --trace constant:100:5" + out, "compiled for 2 workers");
  expect_usage_error("--policies " + pol + " --workers 2 --trace constant:100:5 --scheduler fancy" + out,
                     "unknown scheduler");
  expect_usage_error("--policies " + pol + " --workers 2 --trace constant:100:-5" + out, "duration must be positive");
  expect_usage_error("--policies " + pol + " --workers 2 --trace constant:100:5 --latency sampled" + out, "--profiles");
  expect_usage_error("--policies " + dir() + "/missing.pb --workers 2 --trace constant:100:5" + out, "missing.pb");
  expect_usage_error("--workers 2 --trace constant:100:5" + out, "--policies");
  expect_usage_error("--policies " + pol + " --workers 2 --trace constant:100:5 --bogus 1" + out, "bogus");
  expect_usage_error("--policies " + pol + " --workers 2 --trace constant:100:5 --replay twice" + out, "--replay");
  expect_usage_error("--policies " + pol + " --workers 2 --trace arrivals:" + bad_trace + " --replay reference" + out,
                     "arrivals");
  // --arrivals with steps: starts ascending strictly from 0, each a process.
  const std::string base = "--policies " + pol + " --workers 2 --trace constant:100:5" + out + " --arrivals ";
  expect_usage_error(base + "poisson@1,gamma:4@2", "--arrivals");
  expect_usage_error(base + "poisson@0,gamma:4@0", "ascend");
  expect_usage_error(base + "poisson@0,gamma:0@2", "gamma CV2");
  expect_usage_error(base + "poisson@0,batch:4", "no @START_S");
  expect_usage_error(base + "poisson@0,gamma:4@nan", "--arrivals");
  CHECK_FALSE(std::filesystem::exists(dir() + "/bad.json"));
}

TEST_CASE(
    "lull simulate: worker events and online compilation flags, and a bad schedule is one line, exit 2, no output",
    "[sim][cli][online]") {
  const std::string pol = tiny_policies(), out_path = dir() + "/online_bad.json", out = " --out " + out_path;
  std::filesystem::remove(out_path);
  const std::string broken = dir() + "/broken_plan.json";
  std::ofstream(broken) << "{\"schedule\": [{\"start_s\": 0,";
  const std::string base = "--policies " + pol + " --workers 2 --trace constant:100:5";
  expect_usage_error(base + " --workers-schedule " + broken + out, "broken_plan.json");
  expect_usage_error(base + " --fail 1@3" + out, "WORKER@T:DURATION");
  expect_usage_error(base + " --workers-at 3" + out, "T:K");
  expect_usage_error(base + " --online-compile maybe" + out, "--online-compile");
  expect_usage_error(base + " --online-compile on" + out, "--profiles");
  expect_usage_error(base + " --fail 1@1:1 --scheduler jellyfish" + out, "lull only");
  expect_usage_error(base + " --trace-scale 0" + out, "--trace-scale");
  CHECK_FALSE(std::filesystem::exists(out_path));
}

TEST_CASE("lull simulate --online-compile on compiles the K-1 policy with the library's settings",
          "[sim][cli][online]") {
  const std::string profile = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";
  const std::string pol = dir() + "/tiny_compiled.pb", out = dir() + "/online.json";
  const Outcome c = run_lull("compile --profiles " + profile +
                             " --slo-ms 60 --workers 3 --load-qps 100,300 --max-queue 6 "
                             "--intervals 12 --device cpu --out " +
                             pol);
  REQUIRE(c.code == 0);
  const Outcome o = run_lull("simulate --policies " + pol +
                             " --workers 3 --trace constant:200:10 --fail 2@3:4 "
                             "--online-compile on --profiles " +
                             profile + " --compile-delay-ms 250 --out " + out);
  INFO(o.output);
  REQUIRE(o.code == 0);
  std::ifstream in(out);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(json.find("\"compilations\": 1,") != std::string::npos);
  CHECK(json.find("{\"workers\": 2, \"load_qps\": 300,") != std::string::npos);  // swapped in and used
  CHECK(json.find("\"worker_seconds\": ") != std::string::npos);
  // lull bench online times the same compilations, one per (workers, load).
  const Outcome b =
      run_lull("bench online --policies " + pol + " --profiles " + profile + " --workers 2,3 --load-qps 250");
  INFO(b.output);
  CHECK(b.code == 0);
  CHECK(b.output.find("2 compilations") != std::string::npos);
}

TEST_CASE("lull simulate --shards G: the result adds up the shards and lists each, and a bad G is one line and exit 2",
          "[sim][cli][shard]") {
  const std::string pol = tiny_policies(), out = dir() + "/shards.json";
  std::filesystem::remove(out);
  const Outcome o =
      run_lull("simulate --policies " + pol + " --workers 2 --shards 2 --trace constant:150:10 --seed 3 --out " + out);
  INFO(o.output);
  REQUIRE(o.code == 0);
  CHECK(o.output.find("lull (2 shards of 1)") != std::string::npos);
  const std::string json = lull::read_whole_file(out);
  CHECK(json.find("\"workers\": 2,") != std::string::npos);  // the fleet's
  CHECK(json.find("{\"shard\": \"0/2\", \"workers\": 1,") != std::string::npos);
  CHECK(json.find("{\"shard\": \"1/2\", \"workers\": 1,") != std::string::npos);
  CHECK(json.find("\"dropped\": 0") != std::string::npos);
  const std::string base = "--policies " + pol + " --trace constant:150:5 --out " + dir() + "/bad.json";
  expect_usage_error(base + " --workers 2 --shards 0", "--shards");
  expect_usage_error(base + " --workers 2 --shards 3", "--shards");
  expect_usage_error(base + " --workers 3 --shards 2", "--shards 2: --workers 3 does not divide");
  expect_usage_error(base + " --workers 2 --shards 2 --scheduler jellyfish", "--shards 2: with --scheduler lull only");
  expect_usage_error(base + " --workers 2 --shards 2 --timeline -", "--timeline");
  expect_usage_error(base + " --workers 2 --shards 2 --fail 0@1:1", "--fail");
}
