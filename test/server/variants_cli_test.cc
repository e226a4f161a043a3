// `lull serve --variant-sets` end to end: a full set {fast, slow} and a set
// compiled with --models fast; under load the variant thread switches to the
// small set and unloads `slow` from the stand-in server through the
// management API: the log line, /metrics and the server's GET /models say
// so, every query is answered 200, and those sent after the switch are
// answered by `fast`. The boundary (0.5 qps) is far below the load sent
// (one query at a time), so the switch does not depend on timing; the waits
// for it are bounded. Then a malformed --variant-sets is a usage error.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test/support/lull_serve_process.h"
#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/model_management.h"
#include "test/support/session_test_support.h"
#include "test/support/cli_runner.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::serve::testing;

namespace {

// `shards` 1: one lull over the stand-in; 2: shard 0 of 2 owning it (server
// 1, nothing, is shard 1's), both sets compiled for 2 workers, which it
// serves for its 1 (the shard view: docs/operators-guide.md "Shards").
void check_variant_switch(int shards) {
  const std::string dir = lull::test::temp_dir() + "/variants_cli_" + std::to_string(shards);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string full = dir + "/full.pb", small = dir + "/small.pb", port_file = dir + "/port",
                    log = dir + "/serve.log";
  const std::string compile = "compile --profiles " + source_path("test/data/tiny_profile.json") +
                              " --slo-ms 300 --workers " + std::to_string(shards) +
                              " --load-qps 5,10 --max-queue 4 --intervals 10 --device cpu";
  REQUIRE(lull::test::run_lull(compile + " --all-models --out " + full).exit_code == 0);
  REQUIRE(lull::test::run_lull(compile + " --models fast --out " + small).exit_code == 0);
  ModelServerProcess server({"--fake", "fast:5:1", "--fake", "slow:10:1"});

  std::vector<std::string> args = {"--policies",
                                   full,
                                   "--servers",
                                   server.url(),
                                   "--variant-sets",
                                   small + "@0.5",
                                   "--variant-dwell-s",
                                   "0",
                                   "--variant-interval-ms",
                                   "50"};
  if (shards == 2) {
    args[3] += ",http://127.0.0.1:9";
    args.insert(args.end(), {"--shard", "0/2"});
  }
  LullServeProcess serve(args, log, port_file);
  HttpClient client;
  const auto post = [&](int i) { return serve.post("tiny", "input-" + std::to_string(i)); };
  const auto header = [](const HttpResponse& r, const std::string& name) {
    for (const auto& [k, v] : r.headers)
      if (k == name) return v;
    return std::string();
  };
  int sent = 0;
  for (; sent < 3000 && lull::test::slurp(log).find("variant switch") == std::string::npos; ++sent)
    REQUIRE(post(sent).status == 200);
  const std::string text = lull::test::slurp(log);
  INFO(text);
  REQUIRE(text.find("lull serve: variant switch " + full + " -> " + small) != std::string::npos);
  CHECK(text.find("unloaded slow") != std::string::npos);
  CHECK(ModelManagementClient(client, server.url()).list() == std::vector<std::string>{"fast"});
  for (int i = 0; i < 20; ++i) {
    const auto r = post(sent + i);
    REQUIRE(r.status == 200);
    CHECK(header(r, "x-lull-model") == "fast");
  }
  const std::string metrics = serve.metrics();
  CHECK(metric_line(metrics, "lull_variant_switches_total") == "lull_variant_switches_total 1");
  CHECK(metric_line(metrics, "lull_worker_models_loaded") ==
        "lull_worker_models_loaded{worker=\"" + server.url() + "\"} 1");
  CHECK(metric_line(metrics, "lull_retried_total") == "lull_retried_total 0");
  // The small set as the shard serves it: for its one worker.
  CHECK(metric_line(metrics, "lull_policy_workers") == "lull_policy_workers 1");
}

}  // namespace

TEST_CASE("lull serve --variant-sets: under load the small set is swapped in and the other model unloaded",
          "[serve][variants][cli]") {
  check_variant_switch(1);
}

TEST_CASE("lull serve --shard 0/2 --variant-sets: the small set's shard view is swapped in under the shard's load",
          "[serve][variants][cli][shard]") {
  check_variant_switch(2);
}

TEST_CASE("lull serve --variant-sets: a malformed item is a usage error naming the flag", "[serve][variants][cli]") {
  const std::string set = lull::test::temp_dir() + "/variants_usage.pb";
  REQUIRE(lull::test::run_lull("compile --profiles " + source_path("test/data/tiny_profile.json") +
                               " --slo-ms 300 --workers 1 --load-qps 5 --max-queue 4 --intervals 10 --device cpu"
                               " --all-models --out " +
                               set)
              .exit_code == 0);
  const auto r = lull::test::run_lull("serve --policies " + set +
                                      " --servers http://127.0.0.1:1 --no-model-check --variant-sets small.pb");
  CHECK(r.exit_code == 2);
  INFO(r.err);
  CHECK(r.err.find("--variant-sets: 'small.pb' is not SET.pb@QPS") != std::string::npos);
}

TEST_CASE("lull serve --variant-sets: what it does not support is refused in one line naming the flags",
          "[serve][variants][cli]") {
  const std::string dir = lull::test::temp_dir();
  const std::string compile = "compile --profiles " + source_path("test/data/tiny_profile.json") +
                              " --slo-ms 300 --load-qps 5 --max-queue 4 --intervals 10 --device cpu --all-models";
  REQUIRE(lull::test::run_lull(compile + " --workers 1:2:1 --out " + dir + "/variants_full_lib.pb").exit_code == 0);
  REQUIRE(lull::test::run_lull(compile + " --workers 1 --out " + dir + "/variants_one.pb").exit_code == 0);
  const std::string lib = dir + "/variants_full_lib.pb";
  const auto refused = [](const std::string& args, const std::string& what) {
    const auto r = lull::test::run_lull("serve " + args);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(what) != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  };
  refused("--policies " + lib +
              " --autoscale --worker-command 'true {port}' --max-violation 0.01 --no-model-check "
              "--variant-sets " +
              lib + "@10",
          "--variant-sets with --autoscale: not with --no-model-check");
  refused("--policies " + lib +
              " --autoscale --worker-pool kubernetes --k8s-api-server https://127.0.0.1:1 --k8s-deployment d "
              "--k8s-service s --max-violation 0.01 --variant-sets " +
              lib + "@10",
          "--variant-sets with --autoscale: only with --worker-pool local");
  refused("--policies " + lib +
              " --servers http://127.0.0.1:1,http://127.0.0.1:2 --no-model-check --recompile-on-drift " + dir +
              "/variants_drift.pb --variant-sets " + lib + "@10",
          "--variant-sets: not with online compilation or --recompile-on-drift");
  // A variant over other worker counts than --policies' library.
  refused("--policies " + lib + " --servers http://127.0.0.1:1,http://127.0.0.1:2 --no-model-check --variant-sets " +
              dir + "/variants_one.pb@10",
          "worker counts 1 differ from the full set's (1,2)");
}

TEST_CASE("lull serve --variant-sets MANIFEST.json: a bad manifest is one line naming the file and field, exit 2",
          "[serve][variants][cli]") {
  const std::string dir = lull::test::temp_dir() + "/variants_manifest_usage";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string compile = "compile --profiles " + source_path("test/data/tiny_profile.json") +
                              " --slo-ms 300 --workers 1 --load-qps 5,10 --max-queue 4 --intervals 10 --device cpu";
  const std::string full = dir + "/full.pb", small = dir + "/small.pb";
  REQUIRE(lull::test::run_lull(compile + " --all-models --out " + full).exit_code == 0);
  REQUIRE(lull::test::run_lull(compile + " --models fast --out " + small).exit_code == 0);
  const auto serve_with = [&](const std::string& manifest_text) {
    const std::string manifest = dir + "/variants.json";
    std::ofstream(manifest) << manifest_text;
    return lull::test::run_lull("serve --policies " + full +
                                " --servers http://127.0.0.1:1 --no-model-check --variant-sets " + manifest);
  };
  const auto refused = [&](const std::string& manifest_text, const std::string& what) {
    const auto r = serve_with(manifest_text);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(lull::test::count_lines(r.err) == 1);
    CHECK(r.err.find(what) != std::string::npos);
  };
  const std::string head = R"({"format": "lull-variants/1", "variants": [)";
  const std::string first = R"({"file": "full.pb", "from_qps": 0, "models": ["fast", "slow"]})";
  refused(head + first + R"(, {"file": "small.pb", "from_qps": "x", "models": ["fast"]}]})",
          dir + "/variants.json: variants[1].from_qps");
  // The first variant must be --policies' set (the models the servers hold at start).
  refused(head + R"({"file": "small.pb", "from_qps": 0, "models": ["fast"]}, )" +
              R"({"file": "full.pb", "from_qps": 5, "models": ["fast", "slow"]}]})",
          "variants[0].models: fast are not --policies' models (fast,slow)");
  // The manifest's models must be the file's.
  refused(head + first + R"(, {"file": "small.pb", "from_qps": 5, "models": ["slow"]}]})",
          "variants[1].models: " + small + " holds policies for other models (fast)");
  refused(head + first + R"(, {"file": "gone.pb", "from_qps": 5, "models": ["fast"]}]})", dir + "/gone.pb");
}
