// Outlier ejection through `lull serve` against stand-in servers: bad
// --eject-* values are refused, a server whose predictions fail while /ping
// passes is ejected and stays out, no query is lost to it, and /metrics
// counts ejections per worker. Verdicts are counts and bounded polls. The
// backend's ejection rules, times included, are checked on a virtual clock
// in outlier_ejection_logic_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test/support/backend_test_support.h"
#include "test/support/lull_serve_process.h"
#include "test/support/model_server_process.h"
#include "test/support/session_test_support.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "test/support/cli_runner.h"

using namespace lull::torchserve;
using namespace lull::serve::testing;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// A fresh folder DIR holding a 2-worker policy set of the tiny profile; returns the set's path.
std::string fresh_tiny_set(const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string set = dir + "/set.pb";
  const auto compiled = lull::test::run_lull("compile --profiles " + source_path("test/data/tiny_profile.json") +
                                             " --slo-ms 300 --workers 2 --load-qps 5,10 --max-queue 4 --intervals 10"
                                             " --all-models --device cpu --out " +
                                             set);
  REQUIRE(compiled.exit_code == 0);
  return set;
}

}  // namespace

TEST_CASE("lull serve: bad --eject-* values are one line naming the flag and exit 2", "[serve][outlier]") {
  const std::string serve = std::string(LULL_BINARY) + " serve --policies absent.pb --servers http://127.0.0.1:1 ";
  const std::pair<std::string, std::string> cases[] = {{"--eject-after-failures 0", "--eject-after-failures"},
                                                       {"--eject-base-ms 0", "--eject-base-ms"},
                                                       {"--eject-base-ms 5000 --eject-max-ms 1000", "--eject-max-ms"}};
  for (const auto& [flags, named] : cases) {
    auto run = lull::test::run_cli(serve + flags);
    INFO(run.output);
    CHECK(run.code == 2);
    CHECK(std::count(run.output.begin(), run.output.end(), '\n') == 1);
    CHECK(run.output.find(named) != std::string::npos);
    CHECK(run.output.find("absent.pb") == std::string::npos);  // refused before the policy set is read
  }
}

TEST_CASE("lull serve /metrics: a forced ejection shows per worker and in the gauge of workers ejected",
          "[serve][outlier][cli]") {
  const std::string dir = lull::test::temp_dir() + "/ejection_metrics";
  const std::string set = fresh_tiny_set(dir);
  ModelServerProcess good({"--fake", "fast:0:0", "--fake", "slow:0:0"});
  ModelServerProcess broken({"--fake", "fast:0:0", "--fake", "slow:0:0", "--malformed-predictions"});  // /ping passes
  // Ejected after 2 failed batches, for longer than the test runs.
  LullServeProcess serve({"--policies", set, "--servers", good.url() + "," + broken.url(), "--no-model-check",
                          "--eject-after-failures", "2", "--eject-base-ms", "600000", "--eject-max-ms", "600000"},
                         dir + "/serve.log", dir + "/port");
  // One query at a time: round-robin sends every other one to the broken
  // server, whose failed batch is retried on the good one (answered 200).
  std::string text;
  for (int i = 0; i < 20; ++i) {
    REQUIRE(serve.post("tiny", "input-" + std::to_string(i)).status == 200);
    text = serve.metrics();
    if (metric_line(text, "lull_workers_ejected ") == "lull_workers_ejected 1") break;
  }
  INFO(text);
  CHECK(metric_line(text, "lull_workers_ejected ") == "lull_workers_ejected 1");
  CHECK(metric_line(text, "lull_worker_ejections_total{worker=\"1\"}") ==
        "lull_worker_ejections_total{worker=\"1\"} 1");
  CHECK(metric_line(text, "lull_worker_ejections_total{worker=\"0\"}") ==
        "lull_worker_ejections_total{worker=\"0\"} 0");
  CHECK(text.find("# TYPE lull_worker_ejections_total counter") != std::string::npos);
  CHECK(text.find("# TYPE lull_workers_ejected gauge") != std::string::npos);
  CHECK(metric_line(text, "lull_worker_up{worker=\"1\"") ==
        "lull_worker_up{worker=\"1\",url=\"" + broken.url() + "\"} 0");
  // Still out, still counted once, while the good worker serves.
  for (int i = 0; i < 4; ++i) REQUIRE(serve.post("tiny", "after-" + std::to_string(i)).status == 200);
  text = serve.metrics();
  CHECK(metric_line(text, "lull_workers_ejected ") == "lull_workers_ejected 1");
  CHECK(metric_line(text, "lull_worker_ejections_total{worker=\"1\"}") ==
        "lull_worker_ejections_total{worker=\"1\"} 1");
}

TEST_CASE("lull serve: a worker answering one prediction too few is ejected and stays out, no query is lost",
          "[serve][outlier][cli]") {
  const std::string dir = lull::test::temp_dir() + "/ejection_short";
  const std::string set = fresh_tiny_set(dir);
  ModelServerProcess good({"--fake", "fast:0:0", "--fake", "slow:0:0"});
  ModelServerProcess broken({"--fake", "fast:0:0", "--fake", "slow:0:0", "--short-predictions"});  // /ping passes
  LullServeProcess serve({"--policies", set, "--servers", good.url() + "," + broken.url(), "--no-model-check",
                          "--eject-after-failures", "2", "--eject-base-ms", "200", "--health-interval-ms", "50"},
                         dir + "/serve.log", dir + "/port");
  const std::string out = "lull_worker_up{worker=\"1\",url=\"" + broken.url() + "\"} 0";
  // Queries one at a time until it was ejected 3 times (bounded): those sent
  // to the broken server fail and are retried on the good one. Its backoffs
  // (200, 400, 800 ms) pass meanwhile, and after each its probe batch fails:
  // it never rejoins.
  int answered = 0, sampled_out = 0, samples = 0;
  bool ejected = false;
  const auto ejections_now = [](const std::string& text) {
    const std::string line = metric_line(text, "lull_worker_ejections_total{worker=\"1\"}");
    return line.empty() ? 0 : std::stoi(line.substr(line.rfind(' ') + 1));
  };
  const auto limit = Clock::now() + milliseconds(60000);
  for (int i = 0; Clock::now() < limit; ++i) {
    const auto r = serve.post("tiny", "input-" + std::to_string(i));
    INFO(r.describe());
    CHECK(r.status == 200);
    answered += r.status == 200;
    const std::string text = serve.metrics();
    if (!ejected) ejected = metric_line(text, "lull_worker_up{worker=\"1\"") == out;
    if (ejected) {
      ++samples;
      sampled_out += metric_line(text, "lull_worker_up{worker=\"1\"") == out;
    }
    if (ejections_now(text) >= 3 && answered > 20) break;
  }
  const std::string text = serve.metrics();
  const std::string ejections = metric_line(text, "lull_worker_ejections_total{worker=\"1\"}");
  INFO(text);
  CHECK(ejected);
  CHECK(samples > 0);
  CHECK(sampled_out == samples);  // out at every look after its ejection
  // Ejected, then ejected again after each failed probe.
  REQUIRE(ejections.rfind("lull_worker_ejections_total{worker=\"1\"} ", 0) == 0);
  CHECK(std::stoi(ejections.substr(ejections.rfind(' ') + 1)) >= 3);
  std::ifstream log_in(dir + "/serve.log");
  const std::string log((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  const std::string name = "worker 1 (" + broken.url() + ") ";
  const auto down = log.find(name + "down: out of rotation");
  REQUIRE(down != std::string::npos);
  CHECK(log.find(name + "up", down) == std::string::npos);  // never flapped back
  CHECK(metric_line(text, "lull_worker_batches_total{worker=\"1\",result=\"failed\"}") ==
        "lull_worker_batches_total{worker=\"1\",result=\"failed\"} 2");  // queries went to it twice only
  CHECK(answered > 20);
}
