// Bad input gets one line naming the file and field, exit code 2, and no
// output file; a load beyond capacity compiles with a warning.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "test/support/cli_runner.h"

using lull::test::run_lull;
using lull::test::write_temp;

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

std::string tiny_with(const std::string& from, const std::string& to) {
  std::string text = lull::test::slurp(kTiny);
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

// Compiles `profile` and expects a one-line error mentioning every `needle`.
void expect_compile_error(const std::string& profile, const std::string& extra, std::vector<std::string> needles) {
  const std::string out = lull::test::temp_dir() + "/never.pb";
  std::filesystem::remove(out);
  const auto r = run_lull("compile --profiles " + profile +
                          " --slo-ms 100 --workers 2 --load-qps 50 --device cpu --out " + out + " " + extra);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(lull::test::count_lines(r.err) == 1);
  for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

}  // namespace

TEST_CASE("the tiny profile compiles and round-trips through policy show/dump", "[cli]") {
  const std::string out = lull::test::temp_dir() + "/tiny.pb";
  const auto r = run_lull("compile --profiles " + kTiny +
                          " --slo-ms 100 --workers 2 --load-qps 50,100 --max-queue 8 "
                          "--device cpu --out " +
                          out + " --report -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"expected_accuracy\"") != std::string::npos);
  CHECK(r.out.find("\"value_iteration\"") != std::string::npos);
  const auto show = run_lull("policy show " + out);
  REQUIRE(show.exit_code == 0);
  CHECK(show.out.find("slow") != std::string::npos);
  const auto dump = run_lull("policy dump " + out + " --json - --load-qps 50");
  REQUIRE(dump.exit_code == 0);
  // models, columns, policies, rows: 8 queue lengths x 101 slack indices + the full-queue state.
  CHECK(std::count(dump.out.begin(), dump.out.end(), '[') == 1 + 1 + 1 + 1 + 8 * 101 + 1);
  CHECK(dump.out.find("[9,0,0,0,9]") != std::string::npos);     // F serves N+1 on the fastest model
  CHECK(dump.out.find("\"models\":[\"") != std::string::npos);  // names, in model-id order
}

TEST_CASE("malformed JSON", "[cli][bad-input]") {
  expect_compile_error(write_temp("malformed.json", "{\"models\": [ {\"name\": \"x\", "), "",
                       {"malformed.json", "malformed"});
}

TEST_CASE("a model with no latencies", "[cli][bad-input]") {
  expect_compile_error(write_temp("nolat.json", "{\"models\":[{\"name\":\"x\",\"accuracy\":0.5}]}"), "",
                       {"nolat.json", "models[0] (x).latencies", "no latencies"});
}

TEST_CASE("negative, zero or NaN latency", "[cli][bad-input]") {
  expect_compile_error(write_temp("neg.json", tiny_with("\"latency_s\": 0.006", "\"latency_s\": -0.006")), "",
                       {"neg.json", "models[0] (fast).latencies[1].latency_s", "positive"});
  expect_compile_error(write_temp("zero.json", tiny_with("0.005, 0.0045", "0, 0.0045")), "",
                       {"zero.json", "models[0] (fast).latencies[0].samples_s[1]"});
  expect_compile_error(write_temp("nan.json", tiny_with("\"latency_s\": 0.016", "\"latency_s\": \"NaN\"")), "",
                       {"nan.json", "models[1] (slow).latencies[1].latency_s", "nan"});
}

TEST_CASE("accuracy outside [0, 1]", "[cli][bad-input]") {
  expect_compile_error(write_temp("acc.json", tiny_with("\"accuracy\": 0.8", "\"accuracy\": 80")), "",
                       {"acc.json", "models[1] (slow).accuracy", "[0, 1]"});
}

TEST_CASE("an SLO below the fastest model's batch-1 latency", "[cli][bad-input]") {
  const std::string out = lull::test::temp_dir() + "/never.pb";
  const auto r =
      run_lull("compile --profiles " + kTiny + " --slo-ms 3 --workers 2 --load-qps 50 --device cpu --out " + out);
  CHECK(r.exit_code == 2);
  CHECK(lull::test::count_lines(r.err) == 1);
  CHECK(r.err.find("fast") != std::string::npos);
  CHECK(r.err.find("4.95 ms") != std::string::npos);  // p95 of {4, 4.5, 5} ms
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("workers < 1, load <= 0, intervals < 1", "[cli][bad-input]") {
  const std::string base =
      "compile --profiles " + kTiny + " --slo-ms 100 --device cpu --out " + lull::test::temp_dir() + "/never.pb ";
  for (const auto& [args, needle] :
       std::vector<std::pair<std::string, std::string>>{{"--workers 0 --load-qps 50", "--workers"},
                                                        {"--workers 2 --load-qps 0", "--load-qps"},
                                                        {"--workers 2 --load-qps -10", "--load-qps"},
                                                        {"--workers 2 --load-qps 50 --intervals 0", "--intervals"}}) {
    const auto r = run_lull(base + args);
    INFO(args << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(lull::test::count_lines(r.err) == 1);
    CHECK(r.err.find(needle) != std::string::npos);
  }
}

TEST_CASE("corrupt or truncated policy files are refused by policy show", "[cli][bad-input]") {
  const std::string good = lull::test::temp_dir() + "/good.pb";
  REQUIRE(run_lull("compile --profiles " + kTiny +
                   " --slo-ms 100 --workers 2 --load-qps 50 --max-queue 4 --device cpu --out " + good)
              .exit_code == 0);
  const std::string bytes = lull::test::slurp(good);
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x5a;
  for (const auto& [name, content] :
       std::vector<std::pair<std::string, std::string>>{{"truncated.pb", bytes.substr(0, bytes.size() / 2)},
                                                        {"flipped.pb", flipped},
                                                        {"empty.pb", ""},
                                                        {"text.pb", "this is not a policy"}}) {
    const auto path = write_temp(name, content);
    const auto r = run_lull("policy show " + path);
    INFO(name << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(lull::test::count_lines(r.err) == 1);
    CHECK(r.err.find(name) != std::string::npos);
  }
}

TEST_CASE("a load beyond capacity compiles with a warning", "[cli]") {
  const std::string out = lull::test::temp_dir() + "/overload.pb";
  const auto r = run_lull("compile --profiles " + kTiny +
                          " --slo-ms 100 --workers 1 --load-qps 5000 --max-queue 8 --device cpu --out " + out);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning") != std::string::npos);
  CHECK(r.err.find("beyond") != std::string::npos);
  CHECK(std::filesystem::exists(out));
}
