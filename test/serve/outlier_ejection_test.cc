// Outlier ejection through the TorchServe backend against stand-in servers:
// a server whose predictions hang while /ping answers is ejected and stays out
// for growing periods instead of flapping; one answering 200 with undecodable
// bodies is ejected; per-input rejections never eject; `lull serve`'s
// /metrics counts an ejection per worker and the workers out for one. Verdicts
// are counts and lower bounds that a slow machine only makes easier to meet.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend_test_support.h"
#include "lull_serve_process.h"
#include "model_server_process.h"
#include "session_test_support.h"
#include "runtime/net/http_client.h"
#include "runtime/query_inputs.h"
#include "runtime/torchserve/torchserve_backend.h"
#include "test/support/cli_runner.h"

using namespace lull::serve;
using namespace lull::serve::testing;
using lull::runtime::BatchRequest;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

BatchRequest one_query_batch(lull::runtime::QueryId id) {
  BatchRequest b;
  b.worker = 0;
  b.model = 0;
  b.queries = {id};
  return b;
}

// A one-worker backend on `server` serving its model "fast", reporting to
// `log` (and health changes after its start to `on_health`), started and up.
std::unique_ptr<TorchServeBackend> one_worker(const ModelServerProcess& server, const QueryInputs& inputs,
                                              const TorchServeOptions& opts, ResultLog& log,
                                              std::function<void(int, bool)> on_health = {}) {
  auto backend = std::make_unique<TorchServeBackend>(std::vector<WorkerEndpoint>{{server.url(), server.url()}},
                                                     std::vector<std::string>{"fast"}, inputs, opts);
  backend->set_completion_handler([&log](const lull::runtime::BatchResult& r) { log.add(r); });
  auto started = std::make_shared<std::atomic<bool>>(false);  // start()'s own "up" is not reported
  backend->set_health_handler([started, on_health](int w, bool up) {
    if (*started && on_health) on_health(w, up);
  });
  REQUIRE(backend->start() == 1);
  *started = true;
  return backend;
}

// Sends worker 0 a one-query batch and waits for its result, the n-th reported.
lull::runtime::BatchResult send_one(TorchServeBackend& backend, ResultLog& log, size_t n) {
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

}  // namespace

TEST_CASE("outlier ejection: hanging predictions with a healthy /ping eject with backoff, no flapping",
          "[serve][backend][fault][outlier]") {
  ModelServerProcess s0({"--fake", "fast:0:0", "--delay-ms", "5000"});  // predictions hang; /ping answers
  QueryInputs inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.batch_timeout_ms = 200;
  opts.health_interval_ms = 100;  // a passing ping every 100 ms: before ejection, it put the worker back each time
  opts.outlier.eject_after_failures = 2;
  opts.outlier.base_ms = 1000;
  opts.outlier.max_ms = 30000;
  ResultLog log;
  HealthLog health;
  auto owned = one_worker(s0, inputs, opts, log, [&](int, bool up) { health.add(up); });
  TorchServeBackend& backend = *owned;

  const int sent = drive(backend, log, milliseconds(5000));
  backend.stop();
  std::lock_guard<std::mutex> lock(health.mu);
  int downs = 0, ups = 0;
  for (const auto& e : health.events) (e.second ? ups : downs)++;
  INFO("sent " << sent << ", downs " << downs << ", ups " << ups);
  for (const auto& r : log.wait_for(0, milliseconds(0))) CHECK_FALSE(r.ok);
  // Ejections of 1 s then 2 s, each after 2 timeouts of 200 ms: at most 3
  // ejections and 2 returns fit in 5 s (a passing ping alone would have put it
  // back every 100 ms: about 16 of each).
  CHECK(downs >= 2);
  CHECK(downs <= 3);
  CHECK(ups <= 2);
  CHECK(backend.stats(0).ejections == static_cast<std::uint64_t>(downs));
  // Every down period lasted at least (about) its ejection time, and they grew.
  std::int64_t expected_ms = 1000;
  for (size_t i = 0; i + 1 < health.events.size(); i += 2) {
    REQUIRE_FALSE(health.events[i].second);
    REQUIRE(health.events[i + 1].second);
    const auto out = std::chrono::duration_cast<milliseconds>(health.events[i + 1].first - health.events[i].first);
    INFO("ejection " << i / 2 << " lasted " << out.count() << " ms");
    CHECK(out.count() >= expected_ms * 9 / 10);
    expected_ms *= 2;
  }
}

TEST_CASE("outlier ejection: 200 answers with undecodable bodies eject the worker, which returns after time and ping",
          "[serve][backend][fault][outlier]") {
  ModelServerProcess s0({"--fake", "fast:0:0", "--malformed-predictions"});
  QueryInputs inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.health_interval_ms = 50;
  opts.outlier.eject_after_failures = 3;
  opts.outlier.base_ms = 300;
  ResultLog log;
  auto owned = one_worker(s0, inputs, opts, log);
  TorchServeBackend& backend = *owned;
  for (size_t i = 1; i <= 3; ++i) {
    CHECK(backend.worker_up(0));  // not out before the third failure
    CHECK_FALSE(send_one(backend, log, i).ok);
  }
  const auto ejected_at = Clock::now();
  CHECK_FALSE(backend.worker_up(0));
  CHECK(backend.stats(0).ejections == 1);
  // Pings pass all along; it returns once its 300 ms are over.
  bool back = false;
  for (int i = 0; i < 150 && !back; ++i) {
    back = backend.worker_up(0);
    if (!back) std::this_thread::sleep_for(milliseconds(20));
  }
  REQUIRE(back);
  CHECK(Clock::now() - ejected_at >= milliseconds(250));
}

TEST_CASE("outlier ejection: inputs the model rejects never eject the worker", "[serve][backend][outlier]") {
  ModelServerProcess s0({"--fake", "fast:0:0"});
  QueryInputs inputs;
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
  const std::pair<std::string, std::string> cases[] = {
      {"--eject-after-failures 0", "--eject-after-failures"},
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
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string set = dir + "/set.pb";
  const auto compiled = lull::test::run_lull("compile --profiles " + source_path("test/data/tiny_profile.json") +
                                             " --slo-ms 300 --workers 2 --load-qps 5,10 --max-queue 4 --intervals 10"
                                             " --all-models --device cpu --out " + set);
  REQUIRE(compiled.exit_code == 0);
  ModelServerProcess good({"--fake", "fast:0:0", "--fake", "slow:0:0"});
  ModelServerProcess broken({"--fake", "fast:0:0", "--fake", "slow:0:0", "--malformed-predictions"});  // /ping passes
  // Ejected after 2 failed batches, for longer than the test runs.
  LullServeProcess serve({"--policies", set, "--servers", good.url() + "," + broken.url(), "--no-model-check",
                          "--eject-after-failures", "2", "--eject-base-ms", "600000", "--eject-max-ms", "600000"},
                         dir + "/serve.log", dir + "/port");
  HttpClient client;
  const auto metrics = [&] {
    HttpRequest m;
    m.url = serve.base() + "/metrics";
    return client.fetch(m).body;
  };
  // One query at a time: round-robin sends every other one to the broken
  // server, whose failed batch is retried on the good one (answered 200).
  std::string text;
  for (int i = 0; i < 20; ++i) {
    REQUIRE(serve.post("tiny", "input-" + std::to_string(i)).status == 200);
    text = metrics();
    if (metric_line(text, "lull_workers_ejected ") == "lull_workers_ejected 1") break;
  }
  INFO(text);
  CHECK(metric_line(text, "lull_workers_ejected ") == "lull_workers_ejected 1");
  CHECK(metric_line(text, "lull_worker_ejections_total{worker=\"1\"}") == "lull_worker_ejections_total{worker=\"1\"} 1");
  CHECK(metric_line(text, "lull_worker_ejections_total{worker=\"0\"}") == "lull_worker_ejections_total{worker=\"0\"} 0");
  CHECK(text.find("# TYPE lull_worker_ejections_total counter") != std::string::npos);
  CHECK(text.find("# TYPE lull_workers_ejected gauge") != std::string::npos);
  CHECK(metric_line(text, "lull_worker_up{worker=\"1\"") ==
        "lull_worker_up{worker=\"1\",url=\"" + broken.url() + "\"} 0");
  // Still out, still counted once, while the good worker serves.
  for (int i = 0; i < 4; ++i) REQUIRE(serve.post("tiny", "after-" + std::to_string(i)).status == 200);
  text = metrics();
  CHECK(metric_line(text, "lull_workers_ejected ") == "lull_workers_ejected 1");
  CHECK(metric_line(text, "lull_worker_ejections_total{worker=\"1\"}") == "lull_worker_ejections_total{worker=\"1\"} 1");
}
