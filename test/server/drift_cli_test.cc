// `lull serve --recompile-on-drift` end to end: a policy compiled from the
// tiny profile (fast ~5 ms, slow ~12 ms at batch 1) served by a stand-in
// whose models take ten times as long. After 20 batches lull must say
// "latency drift" in one line, count it in /metrics and write a recompiled
// set built for the latencies it saw, and swap it in at the next query (the
// policy in use is then the recompiled one). The verdict does not depend on timing:
// the stand-in's latencies are at least 40 ms, the profile's under 13 ms.
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
#include "schema/policy_file.h"
#include "test/support/session_test_support.h"
#include "test/support/cli_runner.h"

using namespace lull::net;
using namespace lull::serve::testing;

namespace {

// `shards` 1: one lull over the stand-in; 2: shard 0 of 2, owning the
// stand-in (server 0 of "stand-in, nothing": server 1 is shard 1's), with
// the set compiled for 2 workers at twice the loads, which it serves at half
// the load for 1.
void check_drift_recompiled_and_swapped_in(int shards) {
  const std::string dir = lull::test::temp_dir() + "/drift_cli_" + std::to_string(shards);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string set = dir + "/set.pb", out = dir + "/recompiled.pb", port_file = dir + "/port",
                    log = dir + "/serve.log";
  const auto compiled = lull::test::run_lull("compile --profiles " + source_path("test/data/tiny_profile.json") +
                                             " --slo-ms 300 --workers " + std::to_string(shards) + " --load-qps " +
                                             (shards == 1 ? "5,10" : "10,20") +
                                             " --max-queue 4 --intervals 10"
                                             " --all-models --device cpu --out " +
                                             set);
  REQUIRE(compiled.exit_code == 0);
  ModelServerProcess server({"--fake", "fast:40:5", "--fake", "slow:60:10"});

  std::vector<std::string> args = {"--policies",           set, "--servers", server.url(), "--no-model-check",
                                   "--recompile-on-drift", out};
  if (shards == 2) {
    args[3] += ",http://127.0.0.1:9";
    args.insert(args.end(), {"--shard", "0/2"});
  }
  LullServeProcess serve(args, log, port_file);
  const std::string& base = serve.base();
  HttpClient client;
  const auto post = [&](int i) { return serve.post("tiny", "input-" + std::to_string(i)); };
  for (int i = 0; i < 24; ++i) REQUIRE(post(i).status == 200);  // one at a time: 24 batches of 1
  HttpRequest m;
  m.url = base + "/metrics";
  const std::string metrics = client.fetch(m).body;
  const auto value = [&](const std::string& name) {
    const std::string line = metric_line(metrics, name + " ");
    return line.empty() ? -1.0 : std::stod(line.substr(line.rfind(' ') + 1));
  };
  CHECK(value("lull_latency_drift_total") >= 1);
  CHECK(value("lull_latency_drift_pairs") >= 1);
  // The recompilation runs beside serving; it takes well under a second here.
  for (int i = 0; i < 300 && !std::filesystem::exists(out); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(std::filesystem::exists(out));
  // Its log line follows the write and the hand-over to the session.
  for (int i = 0; i < 300 && lull::test::slurp(log).find("recompiled from observed") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string text = lull::test::slurp(log);
  INFO(text);
  CHECK(text.find("lull serve: latency drift: ") != std::string::npos);
  CHECK(text.find("lull serve: recompiled from observed latencies") != std::string::npos);
  const auto before = lull::read_policy_set(set);
  const auto after = lull::read_policy_set(out);
  CHECK(after.slo_ms() == before.slo_ms());
  CHECK(after.policies_size() == before.policies_size());
  // The model served (slow, the policy's pick for a lone query) plans with
  // the stand-in's 70 ms; the one never served is scaled by the same ratio.
  const auto lat1 = [](const lull::schema::PolicySet& s, const std::string& name) {
    for (const auto& model : s.models())
      if (model.name() == name) return model.latency_us(0);
    return -1.0;
  };
  CHECK(lat1(after, "slow") >= 60'000);
  CHECK(lat1(after, "fast") >= 4 * lat1(before, "fast"));

  // The recompiled set is swapped in at the next arrival: /metrics counts
  // it, the log says so, and the policy in use (the one selection reads) is
  // the recompiled set's at the load /metrics names, not the served one's.
  REQUIRE(post(0).status == 200);
  const std::string swapped = client.fetch(m).body;
  const auto now = [&](const std::string& name) {
    const std::string line = metric_line(swapped, name + " ");
    return line.empty() ? -1.0 : std::stod(line.substr(line.rfind(' ') + 1));
  };
  CHECK(now("lull_drift_recompilations_total") == 1);
  // A shard serves the recompiled set (the fleet's) through its view: for
  // its one worker at its share of the load.
  CHECK(now("lull_policy_workers") == 1);
  const double load = now("lull_policy_load_queries_per_second") * shards;
  const auto at = [&](const lull::schema::PolicySet& s) -> const lull::schema::Policy* {
    for (const auto& p : s.policies())
      if (p.inputs().load_qps() == load) return &p;
    return nullptr;
  };
  REQUIRE(at(after) != nullptr);
  REQUIRE(at(before) != nullptr);
  INFO("policy in use at " << load << " qps; recompiled expects violation " << at(after)->expected().violation_rate()
                           << ", the served set " << at(before)->expected().violation_rate());
  CHECK(now("lull_policy_expected_violation_ratio") == Approx(at(after)->expected().violation_rate()).margin(1e-6));
  CHECK(now("lull_policy_expected_accuracy_ratio") == Approx(at(after)->expected().accuracy()).margin(1e-6));
  CHECK(at(after)->expected().violation_rate() != Approx(at(before)->expected().violation_rate()).margin(1e-6));
  CHECK(lull::test::slurp(log).find("lull serve: swapped in the policies recompiled from observed latencies") !=
        std::string::npos);
}

}  // namespace

TEST_CASE("lull serve --recompile-on-drift: slower servers than profiled give a drift line, metrics and a new set",
          "[serve][drift][cli]") {
  check_drift_recompiled_and_swapped_in(1);
}

TEST_CASE("lull serve --shard 0/2 --recompile-on-drift: the fleet's set recompiled, swapped in through the shard view",
          "[serve][drift][cli][shard]") {
  check_drift_recompiled_and_swapped_in(2);
}

TEST_CASE("lull serve --recompile-on-drift: a second process given the same file is refused in one line",
          "[serve][drift][cli]") {
  const std::string dir = lull::test::temp_dir() + "/drift_cli_lock";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string set = dir + "/set.pb", out = dir + "/recompiled.pb";
  REQUIRE(lull::test::run_lull("compile --profiles " + source_path("test/data/tiny_profile.json") +
                               " --slo-ms 300 --workers 1 --load-qps 5,10 --max-queue 4 --intervals 10"
                               " --all-models --device cpu --out " +
                               set)
              .exit_code == 0);
  ModelServerProcess server({"--fake", "fast:40:5", "--fake", "slow:60:10"});
  const std::vector<std::string> args = {"--policies",           set, "--servers", server.url(), "--no-model-check",
                                         "--recompile-on-drift", out};
  {
    LullServeProcess first(args, dir + "/first.log", dir + "/port");
    // Bounded: without the lock the second would serve until stopped (timeout's 124).
    const auto second =
        lull::test::run_cli("timeout 30 " + std::string(LULL_BINARY) + " serve --listen 127.0.0.1:0 --policies " + set +
                            " --servers " + server.url() + " --no-model-check --recompile-on-drift " + out);
    CHECK(second.code == 2);
    CHECK(second.output.find("--recompile-on-drift " + out + ": another lull process writes it") != std::string::npos);
    CHECK(lull::test::count_lines(second.output) == 1);
  }
  // Once the first has stopped, the file is free again: the lock went with it.
  LullServeProcess again(args, dir + "/again.log", dir + "/port_again");
  CHECK_FALSE(again.base().empty());
}
