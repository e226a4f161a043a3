// `lull serve --recompile-on-drift` end to end: a policy compiled from the
// tiny profile (fast ~5 ms, slow ~12 ms at batch 1) served by a stand-in
// whose models take ten times as long. After 20 batches lull must say
// "latency drift" in one line, count it in /metrics and write a recompiled
// set built for the latencies it saw. The verdict does not depend on timing:
// the stand-in's latencies are at least 40 ms, the profile's under 13 ms.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "model_server_process.h"
#include "runtime/serve/http_client.h"
#include "schema/policy_file.h"
#include "session_test_support.h"
#include "test/support/cli_runner.h"

extern char** environ;

using namespace lull::serve;
using namespace lull::serve::testing;

TEST_CASE("lull serve --recompile-on-drift: slower servers than profiled give a drift line, metrics and a new set",
          "[serve][drift][cli]") {
  const std::string dir = lull::test::temp_dir() + "/drift_cli";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string set = dir + "/set.pb", out = dir + "/recompiled.pb", port_file = dir + "/port", log = dir + "/serve.log";
  const auto compiled = lull::test::run_lull("compile --profiles " + source_path("test/data/tiny_profile.json") +
                                             " --slo-ms 300 --workers 1 --load-qps 5,10 --max-queue 4 --intervals 10"
                                             " --all-models --device cpu --out " + set);
  REQUIRE(compiled.exit_code == 0);
  ModelServerProcess server({"--fake", "fast:40:5", "--fake", "slow:60:10"});

  std::vector<std::string> args = {LULL_BINARY, "serve", "--policies", set, "--servers", server.url(),
                                   "--listen", "127.0.0.1:0", "--port-file", port_file, "--no-model-check",
                                   "--recompile-on-drift", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, LULL_BINARY, &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  struct Stop {  // SIGTERM on every way out
    pid_t pid;
    ~Stop() {
      ::kill(pid, SIGTERM);
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
  } stop{pid};

  std::string port;
  for (int i = 0; i < 300 && port.empty(); ++i) {
    std::ifstream(port_file) >> port;
    if (port.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE_FALSE(port.empty());
  const std::string base = "http://127.0.0.1:" + port;
  HttpClient client;
  for (int i = 0; i < 24; ++i) {  // one at a time: 24 batches of 1
    HttpRequest r;
    r.method = "POST";
    r.url = base + "/predictions/tiny";
    r.body = "input-" + std::to_string(i);
    r.timeout_ms = 10000;
    REQUIRE(client.fetch(r).status == 200);
  }
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
  for (int i = 0; i < 300 && !std::filesystem::exists(out); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(std::filesystem::exists(out));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its log line follows the write
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
}
