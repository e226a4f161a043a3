// Outlier ejection through the TorchServe backend against stand-in servers:
// a server whose predictions hang, or answer 200 with one prediction too few
// or an undecodable body, while /ping answers is ejected and stays out with
// a doubling backoff (each ended by a probe batch that fails) instead of
// flapping back at every backoff; once repaired it returns after its backoff
// and a passing probe; per-input rejections never eject; `lull serve` loses
// no query to an ejected worker, and its /metrics counts ejections per
// worker. Verdicts are counts and bounds that a slow machine only makes
// easier to meet.
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
#include "runtime/core/query_inputs.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "test/support/cli_runner.h"

using namespace lull::torchserve;
using namespace lull::serve::testing;
using lull::core::BatchRequest;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

BatchRequest one_query_batch(lull::core::QueryId id) {
  BatchRequest b;
  b.worker = 0;
  b.model = 0;
  b.queries = {id};
  return b;
}

// A one-worker backend on `server` serving its model "fast", reporting to
// `log` (and health changes after its start to `on_health`), started and up.
std::unique_ptr<TorchServeBackend> one_worker(const ModelServerProcess& server, const lull::core::QueryInputs& inputs,
                                              const TorchServeOptions& opts, ResultLog& log,
                                              std::function<void(int, bool)> on_health = {}) {
  auto backend = std::make_unique<TorchServeBackend>(std::vector<WorkerEndpoint>{{server.url(), server.url()}},
                                                     std::vector<std::string>{"fast"}, inputs, opts);
  backend->set_completion_handler([&log](const lull::core::BatchResult& r) { log.add(r); });
  auto started = std::make_shared<std::atomic<bool>>(false);  // start()'s own "up" is not reported
  backend->set_health_handler([started, on_health](int w, bool up) {
    if (*started && on_health) on_health(w, up);
  });
  REQUIRE(backend->start() == 1);
  *started = true;
  return backend;
}

// Sends worker 0 a one-query batch and waits for its result, the n-th reported.
lull::core::BatchResult send_one(TorchServeBackend& backend, ResultLog& log, size_t n) {
  backend.start_batch(one_query_batch(1));
  auto results = log.wait_for(n, milliseconds(3000));
  REQUIRE(results.size() == n);
  return results.back();
}

struct HealthLog {
  std::mutex mu;
  std::vector<std::pair<Clock::time_point, bool>> events;
  void add(bool up) {
    std::lock_guard<std::mutex> lock(mu);
    events.emplace_back(Clock::now(), up);
  }
};

// Keeps one batch at a time on worker 0 while it is up, as the dispatcher
// does, for `run`; returns how many batches were sent.
int drive(TorchServeBackend& backend, ResultLog& log, milliseconds run) {
  const auto end = Clock::now() + run;
  int sent = 0;
  while (Clock::now() < end) {
    if (backend.worker_up(0) && log.wait_for(0, milliseconds(0)).size() == static_cast<size_t>(sent)) {
      backend.start_batch(one_query_batch(1));
      ++sent;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return sent;
}

// Counts the down and up reports of `health`.
std::pair<int, int> downs_ups(HealthLog& health) {
  std::lock_guard<std::mutex> lock(health.mu);
  int downs = 0, ups = 0;
  for (const auto& e : health.events) (e.second ? ups : downs)++;
  return {downs, ups};
}

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

TEST_CASE("outlier ejection: hanging predictions with a healthy /ping eject once and stay out, backoff growing",
          "[serve][backend][fault][outlier]") {
  ModelServerProcess s0({"--fake", "fast:0:0", "--delay-ms", "5000"});  // predictions hang; /ping answers
  lull::core::QueryInputs inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.batch_timeout_ms = 200;
  opts.health_interval_ms = 100;  // a passing ping every 100 ms: a ping alone put the worker back each time
  opts.outlier.eject_after_failures = 2;
  opts.outlier.base_ms = 1000;
  opts.outlier.max_ms = 30000;
  ResultLog log;
  HealthLog health;
  auto owned = one_worker(s0, inputs, opts, log, [&](int, bool up) { health.add(up); });
  TorchServeBackend& backend = *owned;

  const int sent = drive(backend, log, milliseconds(5000));
  backend.stop();
  const auto [downs, ups] = downs_ups(health);
  INFO("sent " << sent << ", downs " << downs << ", ups " << ups << ", ejections " << backend.stats(0).ejections);
  for (const auto& r : log.wait_for(0, milliseconds(0))) CHECK_FALSE(r.ok);
  // Out after 2 timeouts of 200 ms, then its probe batches time out at 1 s
  // and 3 s: ejected again for 2 s, then 4 s, never back in rotation. (Before
  // probes it came back after each backoff: 3 downs and 2 ups in 5 s; a
  // passing ping alone: about 16 of each.)
  CHECK(downs == 1);
  CHECK(ups == 0);
  CHECK(sent == 2);  // nothing more was sent to it
  CHECK(backend.stats(0).ejections >= 2);
  CHECK(backend.stats(0).ejections <= 3);
}

TEST_CASE("outlier ejection: one prediction too few ejects the worker, which stays out with a doubling backoff",
          "[serve][backend][fault][outlier]") {
  // The probe's finding: /ping passes while every batch fails, and the worker
  // went down and up again at every backoff (5 times in 20 s).
  ModelServerProcess s0({"--fake", "fast:0:0", "--short-predictions"});
  lull::core::QueryInputs inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.health_interval_ms = 50;
  opts.outlier.eject_after_failures = 3;
  opts.outlier.base_ms = 300;
  ResultLog log;
  HealthLog health;
  auto owned = one_worker(s0, inputs, opts, log, [&](int, bool up) { health.add(up); });
  TorchServeBackend& backend = *owned;
  const int sent = drive(backend, log, milliseconds(4000));
  const auto ejections = backend.stats(0).ejections;
  backend.stop();
  const auto [downs, ups] = downs_ups(health);
  INFO("sent " << sent << ", downs " << downs << ", ups " << ups << ", ejections " << ejections << ", last error "
               << backend.stats(0).last_error);
  CHECK(downs == 1);
  CHECK(ups == 0);
  CHECK(sent == 3);
  // Ejections of 300, 600, 1200, 2400 ms (each ended by a failed probe):
  // 3 or 4 fit in 4 s (the same probes without doubling: 13).
  CHECK(ejections >= 3);
  CHECK(ejections <= 5);
  CHECK(backend.stats(0).last_error.find("probe batch: batch response has 0 predictions for 1 inputs") == 0);
}

TEST_CASE("outlier ejection: an ejected worker returns once its backoff is over and a probe batch passes",
          "[serve][backend][fault][outlier]") {
  const int port = free_port();
  auto broken = std::make_unique<ModelServerProcess>(
      std::vector<std::string>{"--fake", "fast:0:0", "--malformed-predictions"}, port);
  lull::core::QueryInputs inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.health_interval_ms = 50;
  opts.outlier.eject_after_failures = 3;
  opts.outlier.base_ms = 300;
  ResultLog log;
  HealthLog health;
  auto owned = one_worker(*broken, inputs, opts, log, [&](int, bool up) { health.add(up); });
  TorchServeBackend& backend = *owned;
  for (size_t i = 1; i <= 3; ++i) {
    CHECK(backend.worker_up(0));  // not out before the third failure
    CHECK_FALSE(send_one(backend, log, i).ok);
  }
  CHECK_FALSE(backend.worker_up(0));
  // Pings pass, the backoff ends, but the probes (200 with an undecodable body) fail: it stays out.
  std::this_thread::sleep_for(milliseconds(1500));
  CHECK_FALSE(backend.worker_up(0));
  CHECK(backend.stats(0).ejections >= 2);
  // Repaired (the same port, a sound server): back after the current backoff and a passing probe.
  broken.reset();
  ModelServerProcess repaired({"--fake", "fast:0:0"}, port);
  bool back = false;
  for (int i = 0; i < 500 && !back; ++i) {
    back = backend.worker_up(0);
    if (!back) std::this_thread::sleep_for(milliseconds(20));
  }
  REQUIRE(back);
  CHECK(send_one(backend, log, 4).ok);
  const auto [downs, ups] = downs_ups(health);
  CHECK(downs == 1);
  CHECK(ups == 1);
}

TEST_CASE("outlier ejection: inputs the model rejects never eject the worker", "[serve][backend][outlier]") {
  ModelServerProcess s0({"--fake", "fast:0:0"});
  lull::core::QueryInputs inputs;
  inputs.put(1, "LULL-MALFORMED");  // the stand-in rejects it: a per-input error inside a 200
  TorchServeOptions opts;
  opts.outlier.eject_after_failures = 1;
  ResultLog log;
  auto owned = one_worker(s0, inputs, opts, log);
  TorchServeBackend& backend = *owned;
  for (size_t i = 1; i <= 4; ++i) {
    const auto r = send_one(backend, log, i);
    CHECK(r.ok);
    REQUIRE(r.input_status.size() == 1);
    CHECK(r.input_status[0] >= 400);
  }
  CHECK(backend.worker_up(0));
  CHECK(backend.stats(0).ejections == 0);
}

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
  // 3 s of queries, one at a time: those sent to the broken server fail and
  // are retried on the good one. Its backoffs (200, 400, 800, 1600 ms) pass
  // meanwhile, and after each its probe batch fails: it never rejoins.
  int answered = 0, sampled_out = 0, samples = 0;
  bool ejected = false;
  const auto end = Clock::now() + milliseconds(3000);
  for (int i = 0; Clock::now() < end; ++i) {
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
    std::this_thread::sleep_for(milliseconds(20));
  }
  const std::string text = serve.metrics();
  const std::string ejections = metric_line(text, "lull_worker_ejections_total{worker=\"1\"}");
  INFO(text);
  CHECK(ejected);
  CHECK(samples > 0);
  CHECK(sampled_out == samples);  // out at every look after its ejection
  // Ejected, then ejected again after each failed probe: at least 3 times in 3 s.
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
