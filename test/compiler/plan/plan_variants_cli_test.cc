// `lull plan variants` through the binary on the small synthetic profile:
// the folder it writes (policy sets and the manifest) read back with the
// schema's manifest reader and policy-file reader, every refused input (one
// line, exit 2, no manifest), and the manifest reader's errors (one line
// naming the file and the field).
#include <catch2/catch.hpp>

#include <filesystem>

#include "schema/policy_file.h"
#include "schema/variant_manifest.h"
#include "test/support/cli_runner.h"
#include "test/support/plan_fixtures.h"

using namespace lull;
using namespace lull::test;
using Catch::Contains;

namespace {

std::string variants_args(const std::string& extra) {
  return small_profile_args("plan variants", "--all-models " + extra);
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = temp_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// A manifest with `variants` as its variants list (and a valid format).
std::string manifest_with(const std::string& name, const std::string& variants) {
  return write_temp(name, "{\"format\": \"lull-variants/1\", \"variants\": " + variants + "}");
}

void check_manifest_error(const std::string& path, const std::string& what) {
  INFO(path << " should fail with " << what);
  try {
    read_variant_manifest(path);
    FAIL("no error");
  } catch (const VariantManifestError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Contains(path + ": " + what));
    CHECK(msg.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("lull plan variants writes the variants' sets and a manifest that reads back") {
  const std::string dir = fresh_dir("plan_variants_out");
  const auto r = run_lull(variants_args("--workers 1 --load-qps 20:200:20 --max-violation 0.01 --variants-out " + dir));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("variant-0.pb  fast,mid,slow"));
  const std::string manifest = dir + "/variants.json";
  const auto entries = read_variant_manifest(manifest);
  REQUIRE(entries.size() >= 2);
  CHECK(entries[0].from_qps == 0);
  CHECK(entries[0].models == std::vector<std::string>{"fast", "mid", "slow"});
  for (std::size_t i = 0; i < entries.size(); ++i) {
    INFO("variant " << i);
    CHECK(entries[i].file == "variant-" + std::to_string(i) + ".pb");
    CHECK(entries[i].path == dir + "/" + entries[i].file);
    CHECK(entries[i].models.front() == "fast");
    // The set on disk: sealed, for 1 worker, the manifest's models, a policy per load.
    const schema::PolicySet set = read_policy_set(entries[i].path);
    CHECK(set.workers() == 1);
    REQUIRE(set.models_size() == static_cast<int>(entries[i].models.size()));
    for (int m = 0; m < set.models_size(); ++m)
      CHECK(set.models(m).name() == entries[i].models[static_cast<std::size_t>(m)]);
    CHECK(set.policies_size() == 10);
  }
  const std::string json = slurp(manifest);
  for (const char* key : {"\"loads\"", "\"meets_target\"", "\"expected_accuracy\"", "\"memory_mb\"", "\"workers\": 1"})
    CHECK_THAT(json, Contains(key));
  // Each variant's set is bit for bit what lull compile --models writes for its models.
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string models;
    for (const auto& m : entries[i].models) models += (models.empty() ? "" : ",") + m;
    const std::string compiled = dir + "/compiled-" + std::to_string(i) + ".pb";
    REQUIRE(run_lull(small_profile_args("compile",
                                        "--workers 1 --load-qps 20:200:20 --models " + models + " --out " + compiled))
                .exit_code == 0);
    CHECK(slurp(compiled) == slurp(entries[i].path));
  }
  // The same plan again: the same bytes but for nothing (no timing in the manifest).
  const std::string again = fresh_dir("plan_variants_again");
  REQUIRE(run_lull(variants_args("--workers 1 --load-qps 20:200:20 --max-violation 0.01 --variants-out " + again))
              .exit_code == 0);
  CHECK(slurp(again + "/variants.json") == json);
  CHECK(slurp(again + "/variant-1.pb") == slurp(dir + "/variant-1.pb"));
}

TEST_CASE("lull plan variants over a worker range: the sets picked on the smallest count, each variant a library") {
  const std::string one = fresh_dir("plan_variants_one_count"), range = fresh_dir("plan_variants_range");
  REQUIRE(run_lull(variants_args("--workers 1 --load-qps 20:200:20 --max-violation 0.01 --variants-out " + one))
              .exit_code == 0);
  const auto r =
      run_lull(variants_args("--workers 1:2:1 --load-qps 20:200:20 --max-violation 0.01 --variants-out " + range));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("picked on 1 workers; each file a policy library for 1,2 workers"));
  const std::string json = slurp(range + "/variants.json");
  CHECK_THAT(json, Contains("\"policies\": \"library\""));
  CHECK_THAT(json, Contains("\"worker_counts\": [\n    1,\n    2\n  ]"));
  CHECK_THAT(slurp(one + "/variants.json"), Contains("\"policies\": \"set\""));
  const auto single = read_variant_manifest(one + "/variants.json");
  const auto entries = read_variant_manifest(range + "/variants.json");
  REQUIRE(entries.size() == single.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    INFO("variant " << i);
    CHECK(entries[i].models == single[i].models);  // the same picks as on 1 worker alone
    CHECK(entries[i].from_qps == single[i].from_qps);
    const schema::PolicyLibrary lib = read_policy_library(entries[i].path);
    REQUIRE(lib.sets_size() == 2);
    // Count 1: the one-count plan's set; count 2: what lull compile --models writes for 2 workers.
    CHECK(lib.sets(0).SerializeAsString() == read_policy_set(single[i].path).SerializeAsString());
    std::string models;
    for (const auto& m : entries[i].models) models += (models.empty() ? "" : ",") + m;
    const std::string compiled = range + "/compiled-" + std::to_string(i) + ".pb";
    REQUIRE(run_lull(small_profile_args("compile",
                                        "--workers 2 --load-qps 20:200:20 --models " + models + " --out " + compiled))
                .exit_code == 0);
    CHECK(lib.sets(1).workers() == 2);
    CHECK(lib.sets(1).SerializeAsString() == read_policy_set(compiled).SerializeAsString());
  }
}

TEST_CASE("lull plan variants with a memory budget: only sets that fit") {
  const std::string dir = fresh_dir("plan_variants_budget");
  const auto r = run_lull(variants_args(
      "--workers 1 --load-qps 20:200:20 --max-violation 0.01 --worker-memory-mb 1000 --variants-out " + dir));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string json = slurp(dir + "/variants.json");
  CHECK(json_number(json, "worker_memory_mb") == 1000);
  CHECK(json_number(json, "candidate_sets") == 3);
  for (const auto& e : read_variant_manifest(dir + "/variants.json"))
    CHECK(e.models.size() <= 2);  // 1300 MiB for all three
}

TEST_CASE("lull plan variants refuses bad input: one line, exit 2, no manifest") {
  const std::string dir = fresh_dir("plan_variants_refused");
  const auto refused = [&](const std::string& args, const std::string& what) {
    const auto r = run_lull(variants_args(args + " --variants-out " + dir));
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_THAT(r.err, Contains(what));
    CHECK_FALSE(std::filesystem::exists(dir + "/variants.json"));
  };
  refused("--workers 1 --load-qps 100 --max-violation 0.01", "--load-qps: variants need a sweep");
  refused("--workers 1 --load-qps 20:200:20 --max-violation 1.5", "--max-violation");
  refused("--workers 1 --load-qps 20:200:20 --max-violation 0.01 --worker-memory-mb 50",
          "below the smallest model's memory");
  refused("--workers 1 --load-qps 20:200:20", "max-violation");
  const auto dash = run_lull(variants_args("--workers 1 --load-qps 20:200:20 --max-violation 0.01 --variants-out -"));
  CHECK(dash.exit_code == 2);
  CHECK_THAT(dash.err, Contains("--variants-out: a folder of files does not go to stdout"));
  const std::string file = write_temp("plan_variants_not_a_dir", "x");
  const auto r =
      run_lull(variants_args("--workers 1 --load-qps 20:200:20 --max-violation 0.01 --variants-out " + file));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--variants-out: " + file + " exists and is not a folder"));
}

TEST_CASE("the variants manifest reader names the file and the field") {
  const std::string ok = R"({"file": "a.pb", "from_qps": 0, "models": ["fast", "slow"]})";
  const std::string second = R"({"file": "b.pb", "from_qps": 50, "models": ["fast"]})";
  const auto good = read_variant_manifest(manifest_with("vm_good.json", "[" + ok + ", " + second + "]"));
  REQUIRE(good.size() == 2);
  CHECK(good[1].from_qps == 50);
  CHECK(good[1].path == temp_dir() + "/b.pb");
  check_manifest_error(write_temp("vm_notjson.json", "{\"format\": "), "malformed variants manifest");
  check_manifest_error(write_temp("vm_noformat.json", "{\"variants\": []}"), "format");
  check_manifest_error(write_temp("vm_wrongformat.json", "{\"format\": \"lull-variants/9\", \"variants\": []}"),
                       "format");
  check_manifest_error(manifest_with("vm_novariants.json", "{}"), "variants: missing or not a list");
  check_manifest_error(manifest_with("vm_one.json", "[" + ok + "]"), "variants: at least two variants");
  check_manifest_error(manifest_with("vm_nofile.json", R"([{"from_qps": 0, "models": ["fast"]}, )" + second + "]"),
                       "variants[0].file");
  check_manifest_error(manifest_with("vm_nofrom.json", R"([{"file": "a.pb", "models": ["fast"]}, )" + second + "]"),
                       "variants[0].from_qps");
  check_manifest_error(
      manifest_with("vm_firstfrom.json", R"([{"file": "a.pb", "from_qps": 5, "models": ["fast"]}, )" + second + "]"),
      "variants[0].from_qps: the first variant serves from 0");
  check_manifest_error(
      manifest_with("vm_order.json", "[" + ok + R"(, {"file": "b.pb", "from_qps": 0, "models": ["fast"]}])"),
      "variants[1].from_qps: loads must be ascending");
  check_manifest_error(
      manifest_with("vm_negative.json", "[" + ok + R"(, {"file": "b.pb", "from_qps": -3, "models": ["fast"]}])"),
      "variants[1].from_qps");
  check_manifest_error(
      manifest_with("vm_nomodels.json", "[" + ok + R"(, {"file": "b.pb", "from_qps": 50, "models": []}])"),
      "variants[1].models: the list is empty");
  check_manifest_error(
      manifest_with("vm_badmodel.json", "[" + ok + R"(, {"file": "b.pb", "from_qps": 50, "models": [3]}])"),
      "variants[1].models");
  check_manifest_error(temp_dir() + "/vm_missing.json", "");
}
