// A worker that went down rejoins `lull serve`'s rotation only when its
// models are loaded: a stand-in server killed under load and restarted with
// --models-ready-after-ms (its /ping passes at once, GET /models/{name}
// answers 404 and predictions 503 meanwhile, as a restarted TorchServe's do)
// is sent no batch until then. Verdicts are counts, the log and bounded polls.
// The rule itself is checked on a virtual clock in health_records_test.cc
// and over the fake transport in torchserve_backend_logic_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "test/support/cli_runner.h"
#include "test/support/lull_serve_process.h"
#include "test/support/model_server_process.h"
#include "test/support/session_test_support.h"

using namespace lull::serve::testing;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// The number at the end of the metric line starting with `prefix` (0: none).
long metric_value(const std::string& text, const std::string& prefix) {
  const std::string line = metric_line(text, prefix);
  return line.empty() ? 0 : std::stol(line.substr(line.rfind(' ') + 1));
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "lull serve: a server restarted under load whose /ping passes before its models load is sent nothing "
    "until they have loaded",
    "[serve][health][cli]") {
  const std::string dir = lull::test::temp_dir() + "/rejoin_model_check";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string set = dir + "/set.pb";
  REQUIRE(lull::test::run_lull("compile --profiles " + source_path("test/data/tiny_profile.json") +
                               " --slo-ms 300 --workers 2 --load-qps 5,10 --max-queue 4 --intervals 10"
                               " --all-models --device cpu --out " +
                               set)
              .exit_code == 0);
  ModelServerProcess s0({"--fake", "fast:0:0", "--fake", "slow:0:0"});
  ModelServerProcess s1({"--fake", "fast:0:0", "--fake", "slow:0:0"});
  // The model check at start is on (the default): it is also the rejoin's.
  LullServeProcess serve({"--policies", set, "--servers", s0.url() + "," + s1.url(), "--health-interval-ms", "50"},
                         dir + "/serve.log", dir + "/port");
  const std::string up1 = "lull_worker_up{worker=\"1\"";
  const std::string failed1 = "lull_worker_batches_total{worker=\"1\",result=\"failed\"}";
  const std::string ok1 = "lull_worker_batches_total{worker=\"1\",result=\"ok\"}";
  int sent = 0, answered = 0;
  // One query at a time until `done(metrics)` or `limit` (bounded), each answered 200; returns the metrics.
  int retried = 0;
  const auto load_until = [&](auto done, milliseconds limit) {
    const auto end = Clock::now() + limit;
    std::string text = serve.metrics();
    while (!done(text) && Clock::now() < end) {
      const auto r = serve.post("tiny", "input-" + std::to_string(sent++));
      INFO(r.describe());
      CHECK(r.status == 200);
      answered += r.status == 200;
      retried += r.header("x-lull-retried") == "1";
      text = serve.metrics();
    }
    return text;
  };

  std::string text = load_until([&](const std::string& t) { return metric_value(t, ok1) >= 5; }, milliseconds(20000));
  REQUIRE(metric_value(text, ok1) >= 5);  // both serve

  s1.kill_now();
  text = load_until([&](const std::string& t) { return metric_value(t, up1) == 0; }, milliseconds(20000));
  REQUIRE(metric_value(text, up1) == 0);
  const long failed_when_down = metric_value(text, failed1);  // what it held or was sent before it went out
  const long ok_when_down = metric_value(text, ok1);

  // Back listening at once, its models loading for 2 s: under load until it rejoins.
  s1.restart({"--models-ready-after-ms", "2000"});
  retried = 0;
  text = load_until([&](const std::string& t) { return metric_value(t, up1) == 1; }, milliseconds(30000));
  REQUIRE(metric_value(text, up1) == 1);
  // Served by it once back.
  text =
      load_until([&](const std::string& t) { return metric_value(t, ok1) >= ok_when_down + 5; }, milliseconds(20000));
  INFO(text);
  CHECK(metric_value(text, ok1) >= ok_when_down + 5);
  CHECK(metric_value(text, failed1) == failed_when_down);  // no batch failed on it after the restart
  CHECK(retried == 0);
  CHECK(answered == sent);

  std::ifstream log_in(dir + "/serve.log");
  const std::string log((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  INFO(log);
  const std::string note = "worker " + s1.url() + " answers its ping but stays out of rotation until its models load";
  CHECK(count_of(log, note) == 1);  // once, not per ping
  const auto at = log.find(note);
  REQUIRE(at != std::string::npos);
  CHECK(log.find("not loaded (HTTP 404)", at) != std::string::npos);
  CHECK(log.find("worker 1 (" + s1.url() + ") up: back in rotation", at) != std::string::npos);
}
