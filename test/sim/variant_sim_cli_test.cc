// `lull simulate --autoscale --variant-sets VARIANTS.json` end to end: the
// manifest `lull plan variants` writes (its sets as policy libraries over
// 2 and 4 workers) switches to the small set while the load is high and
// back, with the switches, per-variant query counts and worker-seconds in
// the result; bad variant input is one line, exit code 2, no result.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "schema/policy_file.h"
#include "test/support/runtime_test_support.h"
#include "test/sim/usage_error_check.h"
#include "test/support/cli_runner.h"

namespace {

using lull::test::CliResult;
using lull::test::run_lull;

// The tiny set for `workers` (models fast, slow); `small`: the fast model
// alone, every action picking it. With two workers the full set's 200 QPS
// policy expects 5% violations, the small set's 1%.
std::string set_file(int workers, bool small) {
  lull::schema::PolicySet set = lull::test::tiny_policy_set();
  set.set_workers(static_cast<unsigned>(workers));
  if (small) set.mutable_models()->RemoveLast();
  for (auto& p : *set.mutable_policies()) {
    p.mutable_inputs()->set_workers(static_cast<unsigned>(workers));
    if (workers == 2 && p.inputs().load_qps() > 150) p.mutable_expected()->set_violation_rate(small ? 0.01 : 0.05);
    if (small)
      for (int a = 0; a < p.action_model_size(); ++a) p.set_action_model(a, 0);
  }
  lull::seal_policy_set(set);
  const std::string path =
      lull::test::temp_dir() + "/vs_" + (small ? "small" : "full") + std::to_string(workers) + ".pb";
  lull::write_policy_set(set, path);
  return path;
}

std::string library(bool small) {
  const std::string lib = lull::test::temp_dir() + (small ? "/vs_small.pb" : "/vs_full.pb");
  const CliResult r = run_lull("policy library " + set_file(2, small) + " " + set_file(4, small) + " --out " + lib);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return lib;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = lull::test::temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string manifest(const std::string& first_models) {
  library(true);
  return write("vs_variants.json", R"({"format": "lull-variants/1", "variants": [
    {"file": "vs_full.pb", "from_qps": 0, "models": [)" +
                                       first_models + R"(]},
    {"file": "vs_small.pb", "from_qps": 100, "models": ["fast"]}]})");
}

// 50 QPS for 20 s, 150 for 40 s, 50 for 40 s.
std::string stepped_trace() {
  std::string lines;
  for (int s = 0; s < 100; ++s) lines += std::to_string(s) + " " + (s >= 20 && s < 60 ? "150" : "50") + "\n";
  return write("vs_trace.txt", lines);
}

}  // namespace

TEST_CASE("lull simulate --autoscale --variant-sets switches with the load and reports it", "[sim][cli][variants]") {
  const std::string full = library(false), variants = manifest(R"("fast", "slow")"),
                    out = lull::test::temp_dir() + "/vs_result.json";
  const CliResult r =
      run_lull("simulate --policies " + full + " --workers 2 --trace rate-file:" + stepped_trace() +
               " --autoscale --max-violation 0.02 --provisioning-delay fixed:3 --variant-sets " + variants +
               " --variant-load current:2 --variant-dwell-s 1 --variant-load-delay-ms 3000 --out " + out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("2 variant switches") != std::string::npos);
  const std::string json = lull::test::slurp(out);
  INFO(json);
  for (const char* key : {"\"worker_seconds\": ", "\"variants\": {\"load\": \"current:2\"", "\"load_delay_s\": 3",
                          "\"from\": \"", "\"queries_by_model\": {\"fast\": "})
    CHECK(json.find(key) != std::string::npos);
  // Up to the small set, then back to the full one.
  const auto up = json.find("\"to\": \"" + lull::test::temp_dir() + "/vs_small.pb\"");
  const auto down = json.find("\"to\": \"" + full + "\"");
  CHECK(up != std::string::npos);
  CHECK(down != std::string::npos);
  CHECK(up < down);
  // The small set's queries never went to the slow model.
  CHECK(json.find("\"models\": [\"fast\"], \"queries\": ") != std::string::npos);
  CHECK(json.find("\"slow\": 0}}") != std::string::npos);
}

TEST_CASE("lull simulate --variant-sets: bad input is one line, exit code 2, no result", "[sim][cli][variants]") {
  const std::string full = library(false), out = lull::test::temp_dir() + "/vs_bad.json";
  const std::string base = "simulate --policies " + full + " --workers 2 --trace constant:50:5 --out " + out + " ";
  const std::string wrong_first = manifest(R"("fast")");
  const std::pair<std::string, std::string> cases[] = {
      {"--autoscale --variant-sets " + wrong_first, "variants[0].models"},
      {"--autoscale --variant-sets " + write("vs_broken.json", "{\"format\": 1}"), "format"},
      {"--variant-sets " + full + "@x", "--variant-sets"},
      {"--autoscale --variant-sets " + full + "@100 --variant-load median:2", "--variant-load"},
      {"--autoscale --variant-sets " + full + "@100 --variant-load-delay-ms -1", "--variant-load-delay-ms"},
      {"--scheduler jellyfish --variant-sets " + full + "@100", "lull only"},
  };
  for (const auto& [flags, needle] : cases) lull::test::check_usage_error(base + flags, needle, out);
}

// An adversarial tester's finding: the manifest's first file was never checked, and a
// first variant listing --policies' models in another order was refused with
// "serve the manifest's vs_full.pb as --policies", which the run already did.
TEST_CASE("lull simulate --variant-sets: every manifest file is checked, model order does not matter",
          "[sim][cli][variants]") {
  const std::string full = library(false), out = lull::test::temp_dir() + "/vs_order.json";
  library(true);
  const std::string base =
      "simulate --policies " + full + " --workers 2 --trace constant:50:5 --autoscale --out " + out;
  const std::string missing_first = write("vs_missing_first.json", R"({"format": "lull-variants/1", "variants": [
    {"file": "vs_gone.pb", "from_qps": 0, "models": ["fast", "slow"]},
    {"file": "vs_small.pb", "from_qps": 100, "models": ["fast"]}]})");
  lull::test::check_usage_error(base + " --variant-sets " + missing_first,
                                "variants[0].file: " + lull::test::temp_dir() + "/vs_gone.pb: no such file", out);
  const CliResult r = run_lull(base + " --variant-sets " + manifest(R"("slow", "fast")"));
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("lull simulate --fail names a worker the run has", "[sim][cli]") {
  const std::string full = library(false), out = lull::test::temp_dir() + "/fail_range.json";
  const std::string base = "simulate --policies " + full + " --workers 2 --trace constant:50:5 --out " + out;
  lull::test::check_usage_error(base + " --fail 99@1:1", "--fail '99@1:1': worker 99 does not exist", out);
  lull::test::check_usage_error(base + " --fail 2@1:1", "workers are numbered 0..1", out);
  CHECK(run_lull(base + " --fail 1@1:1").exit_code == 0);
  CHECK(run_lull(base + " --workers-at 0:4 --fail 3@1:1").exit_code == 0);  // the pool grows to 4 first
}
