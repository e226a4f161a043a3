// Every input is bounded and validated: each crash and each
// runaway input an adversarial tester found is refused here with exit code 2,
// one line on stderr naming the flag or the file and field, and no output
// file. The bad policy sets are sealed with the schema's writer, so they pass
// the checksum and reach the shared validation in runtime/core/policy_loader.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

using lull::test::count_lines;
using lull::test::run_lull;
using lull::test::temp_dir;
using lull::test::write_temp;

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

// A good two-worker set from the tiny profile, compiled once.
const std::string& good_set() {
  static const std::string path = [] {
    const std::string out = temp_dir() + "/limits_good.pb";
    const auto r = run_lull("compile --profiles " + kTiny +
                            " --slo-ms 100 --workers 2 --load-qps 50 --max-queue 8 "
                            "--device cpu --out " +
                            out);
    REQUIRE(r.exit_code == 0);
    return out;
  }();
  return path;
}

// The good set changed by `edit`, sealed again so only the content is bad.
std::string bad_set(const std::string& name, const std::function<void(lull::schema::PolicySet&)>& edit) {
  auto set = lull::read_policy_set(good_set());
  edit(set);
  const std::string path = temp_dir() + "/" + name + ".pb";
  lull::write_policy_set(set, path);
  return path;
}

// Runs `args` (which writes to OUT, if at all) and expects exit 2, one line
// naming every needle, and no OUT.
void expect_refused(const std::string& args_with_out, const std::vector<std::string>& needles) {
  const std::string out = temp_dir() + "/never_written";
  std::filesystem::remove(out);
  std::string args = args_with_out;
  const auto pos = args.find("OUT");
  if (pos != std::string::npos) args.replace(pos, 3, out);
  const auto r = run_lull(args);
  INFO("lull " << args << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.err) == 1);
  for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

// The same bad set through every command that reads policy sets.
void expect_set_refused(const std::string& set, const std::string& field) {
  expect_refused("policy show " + set, {set, field});
  expect_refused("policy dump " + set + " --json OUT", {set, field});
  expect_refused("simulate --policies " + set + " --workers 2 --trace constant:10:1 --out OUT", {set});
  expect_refused("serve --policies " + set +
                     " --servers http://127.0.0.1:9,http://127.0.0.1:9 --no-model-check "
                     "--port-file OUT",
                 {set});
}

}  // namespace

TEST_CASE("the good set passes every policy reader", "[cli][limits]") {
  CHECK(run_lull("policy show " + good_set()).exit_code == 0);
  CHECK(run_lull("policy dump " + good_set()).exit_code == 0);
}

TEST_CASE("sealed policy sets that break the runtime's invariants are refused everywhere", "[cli][limits]") {
  SECTION("empty latency list (policy show crashed)") {
    expect_set_refused(bad_set("no_latency", [](auto& s) { s.mutable_models(0)->clear_latency_us(); }), "latencies");
  }
  SECTION("empty slack grid (policy dump crashed)") {
    expect_set_refused(bad_set("no_grid", [](auto& s) { s.mutable_policies(0)->clear_slack_grid_us(); }),
                       "slack_grid_us");
  }
  SECTION("zero workers") {
    expect_set_refused(bad_set("no_workers", [](auto& s) { s.set_workers(0); }), "workers");
  }
  SECTION("duplicate model names") {
    expect_set_refused(bad_set("dup_names", [](auto& s) { s.mutable_models(1)->set_name(s.models(0).name()); }),
                       "duplicate model name");
  }
  SECTION("empty model name") {
    expect_set_refused(bad_set("empty_name", [](auto& s) { s.mutable_models(0)->set_name(""); }), "models[0].name");
  }
  SECTION("infinite SLO") {
    expect_set_refused(bad_set("inf_slo",
                               [](auto& s) {
                                 s.set_slo_ms(std::numeric_limits<double>::infinity());
                                 for (auto& p : *s.mutable_policies()) p.mutable_inputs()->set_slo_ms(s.slo_ms());
                               }),
                       "slo_ms");
  }
}

TEST_CASE("compile refuses loads and SLOs out of range", "[cli][limits]") {
  const std::string base = "compile --profiles " + kTiny + " --workers 2 --device cpu --out OUT ";
  expect_refused(base + "--slo-ms 100 --load-qps 1e308", {"--load-qps"});
  expect_refused(base + "--slo-ms 1.8e19 --load-qps 50", {"--slo-ms"});
  expect_refused(base + "--slo-ms inf --load-qps 50", {"--slo-ms"});
  expect_refused(base + "--slo-ms 100 --load-qps 50 --workers 1e9", {"--workers"});
}

TEST_CASE("compile refuses a profile batch size beyond the cap", "[cli][limits]") {
  std::string text = lull::test::slurp(kTiny);
  const std::string from = "{\"batch\": 8, \"latency_s\": 0.040}";
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  text.replace(pos, from.size(), "{\"batch\": 1000000000, \"latency_s\": 0.040}");
  const std::string profile = write_temp("huge_batch.json", text);
  expect_refused("compile --profiles " + profile + " --slo-ms 100 --workers 2 --load-qps 50 --device cpu --out OUT",
                 {"huge_batch.json", ".batch", "4096"});
}

TEST_CASE("simulate refuses unbounded traces", "[cli][limits]") {
  const std::string base = "simulate --policies " + good_set() + " --workers 2 --out OUT --trace ";
  expect_refused(base + "constant:40:1e308", {"--trace"});
  expect_refused(base + "constant:1e308:1", {"--trace"});
  const std::string arrivals = write_temp("far_arrival.txt", "0.5\n1e308\n");
  expect_refused(base + "arrivals:" + arrivals, {"far_arrival.txt:2", "arrival time"});
  const std::string rates = write_temp("huge_rate.txt", "0 10\n1 1e300\n");
  expect_refused(base + "rate-file:" + rates, {"huge_rate.txt:2", "QPS"});
  expect_refused(
      "simulate --policies " + good_set() + " --workers 2 --trace constant:10:1 --out OUT --load-window-ms inf",
      {"--load-window-ms"});
}

TEST_CASE("serve refuses thread counts and intervals out of range before serving", "[cli][limits]") {
  const std::string base = "serve --policies " + good_set() +
                           " --servers http://127.0.0.1:9,http://127.0.0.1:9 --no-model-check --port-file OUT ";
  expect_refused(base + "--http-threads -1", {"--http-threads"});
  expect_refused(base + "--http-threads 100000", {"--http-threads"});
  expect_refused(base + "--health-interval-ms 0", {"--health-interval-ms"});
  expect_refused(base + "--health-timeout-ms -5", {"--health-timeout-ms"});
  expect_refused(base + "--batch-timeout-ms 0", {"--batch-timeout-ms"});
  expect_refused(base + "--header-timeout-ms 0", {"--header-timeout-ms"});
  expect_refused(base + "--body-timeout-ms -1", {"--body-timeout-ms"});
  expect_refused(base + "--idle-timeout-ms 3600001", {"--idle-timeout-ms"});
  expect_refused(base + "--max-connections 0", {"--max-connections"});
}

TEST_CASE("profile, loadgen and bench serve refuse counts and rates out of range", "[cli][limits]") {
  const std::string profile = "profile --worker http://127.0.0.1:9 --models m --accuracy " +
                              write_temp("acc.json", "{\"m\": 0.5}") + " --out OUT ";
  expect_refused(profile + "--max-batch 1000000000", {"--max-batch"});
  expect_refused(profile + "--samples -1", {"--samples"});
  expect_refused("loadgen --target http://127.0.0.1:9/predictions/t --rate 1e308 --json OUT", {"--rate"});
  expect_refused("loadgen --target http://127.0.0.1:9/predictions/t --rate 10 --duration 1e308s --json OUT",
                 {"--duration"});
  for (const char* n : {"0", "100001"})
    expect_refused(
        std::string("loadgen --target http://127.0.0.1:9/predictions/t --rate 10 --connections ") + n + " --json OUT",
        {"--connections", "1..100000"});
  expect_refused(
      "bench serve --direct http://127.0.0.1:9/p/m --lull http://127.0.0.1:9/p/t --rate 10 --input-bytes 0 "
      "--json OUT",
      {"--input-bytes"});
}

TEST_CASE("loadgen --rate-file: the file's rates, cut at --duration, bad files refused in one line",
          "[cli][limits][modulated]") {
  const std::string base = "loadgen --target http://127.0.0.1:9/predictions/t --timeout-ms 300 ";
  expect_refused(base + "--json OUT", {"--rate", "--rate-file"});
  expect_refused(base + "--rate 5 --rate-file " + write_temp("lg_r.txt", "0 10\n") + " --json OUT", {"--rate-file"});
  expect_refused(base + "--rate-file " + temp_dir() + "/lg_none.txt --json OUT", {"--rate-file", "lg_none.txt"});
  expect_refused(base + "--rate-file " + write_temp("lg_neg.txt", "0 10\n1 -1\n") + " --json OUT",
                 {"--rate-file", "lg_neg.txt:2"});
  expect_refused(base + "--rate-file " + write_temp("lg_zero.txt", "0 0\n5 0\n") + " --json OUT",
                 {"--rate-file", "every rate is 0"});
  expect_refused(base + "--rate-file " + write_temp("lg_big.txt", "0 2e6\n") + " --json OUT", {"--rate-file", "QPS"});
  expect_refused(base + "--rate-file " + write_temp("lg_back.txt", "5 10\n1 10\n") + " --json OUT",
                 {"--rate-file", "lg_back.txt:2"});
  // 100 QPS, a silent second, 100 QPS (the last line holds as long as the gap
  // before it): 200 arrivals in 3 s, 66.7 QPS asked; cut at 1 s, 100 in 1 s.
  // Nothing listens, so each request fails at once; 4 standard deviations.
  const std::string rates = write_temp("lg_rates.txt", "0 100\n1 0\n2 100\n");
  auto sent = [&](const std::string& extra, double* asked) {
    const auto r = run_lull(base + "--rate-file " + rates + extra + " --json -");
    INFO(r.err);
    CHECK(r.exit_code == 1);
    const auto num = [&](const std::string& key) {
      const auto at = r.out.find("\"" + key + "\":");
      REQUIRE(at != std::string::npos);
      return std::stod(r.out.substr(at + key.size() + 3));
    };
    *asked = num("rate_asked");
    return num("sent");
  };
  double asked = 0;
  CHECK(std::abs(sent("", &asked) - 200) < 4 * std::sqrt(200.0));
  CHECK(asked == Approx(200.0 / 3).epsilon(1e-3));
  CHECK(std::abs(sent(" --duration 1s", &asked) - 100) < 4 * std::sqrt(100.0));
  CHECK(asked == Approx(100).epsilon(1e-3));
}

// An adversarial tester's finding: one sample of 2^32 s corrupted the heap in compile,
// 1e6 s ran for seconds; simulate --latency sampled took -1e308 and 1e9 s.
TEST_CASE("latency samples beyond 1000 x the SLO are refused with the field path", "[cli][limits]") {
  const std::string from = "{\"batch\": 4, \"latency_s\": 0.009}";
  auto with_sample = [&](const std::string& name, const std::string& sample) {
    std::string text = lull::test::slurp(kTiny);
    const auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    return write_temp(name, text.replace(pos, from.size(), "{\"batch\": 4, \"samples_s\": [0.009, " + sample + "]}"));
  };
  const std::string compile = " --slo-ms 100 --workers 2 --load-qps 50 --device cpu --out OUT";
  for (const std::string sample : {"4294967296", "1e6", "100.5"})
    expect_refused("compile --profiles " + with_sample("huge_sample.json", sample) + compile,
                   {"huge_sample.json", "models[0] (fast).latencies[2].samples_s[1]", "1000 x the SLO of 100 ms"});
  // 100 s is 1000 x 100 ms: in range.
  CHECK(run_lull("compile --profiles " + with_sample("edge_sample.json", "100") +
                 " --slo-ms 100 --workers 2 "
                 "--load-qps 50 --max-queue 8 --device cpu --out " +
                 temp_dir() + "/edge.pb")
            .exit_code == 0);
  const std::string sim = "simulate --policies " + good_set() +
                          " --workers 2 --trace constant:10:1 --latency sampled "
                          "--out OUT --profiles ";
  expect_refused(sim + with_sample("sim_huge.json", "1e9"), {"sim_huge.json", "latencies[2].samples_s[1]", "1000 x"});
  expect_refused(sim + with_sample("sim_neg.json", "-1e308"),
                 {"sim_neg.json", "latencies[2].samples_s[1]", "positive"});
  CHECK(run_lull("simulate --policies " + good_set() + " --workers 2 --trace constant:10:1 --latency sampled --out " +
                 temp_dir() + "/sim_ok.json --profiles " + kTiny)
            .exit_code == 0);
}

// An adversarial tester's finding: protobuf printed "[libprotobuf ERROR ...] String field
// ... contains invalid UTF-8 data" on a line of its own before lull's error.
TEST_CASE("a policy file protobuf itself complains about is refused in one line", "[cli][limits]") {
  std::string bytes = lull::test::slurp(good_set());
  const auto pos = bytes.find("tiny");  // the task name, a string field
  REQUIRE(pos != std::string::npos);
  bytes.replace(pos, 4, "\xff\xfe\xfd\xfc");
  const std::string bad = write_temp("bad_utf8.pb", bytes);
  expect_refused("policy show " + bad, {"bad_utf8.pb", "not a policy set", "invalid UTF-8"});
  expect_refused("simulate --policies " + bad + " --workers 2 --trace constant:10:1 --out OUT",
                 {"bad_utf8.pb", "UTF-8"});
}

// NaN, -1 and -1e308 were taken as "not given" (the provisioning delay's
// value), and --max-violation 1e308 was echoed as a 309-digit number.
TEST_CASE("simulate --autoscale: every given lead time is checked, numbers print short", "[cli][limits]") {
  const std::string sim =
      "simulate --policies " + good_set() + " --workers 2 --trace constant:10:1 --out OUT --autoscale ";
  for (const std::string v : {"nan", "-1", "-1e308", "inf", "86401"})
    expect_refused(sim + "--autoscale-lead-s " + v, {"--autoscale-lead-s: must be in 0..86400"});
  expect_refused(sim + "--max-violation 1e308", {"--max-violation: must be in (0, 1) (got 1e+308)"});
  CHECK(run_lull("simulate --policies " + good_set() +
                 " --workers 2 --trace constant:10:1 --autoscale "
                 "--autoscale-lead-s 5 --out " +
                 temp_dir() + "/lead_ok.json")
            .exit_code == 0);
}
