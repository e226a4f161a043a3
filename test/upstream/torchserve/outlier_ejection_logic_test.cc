// Outlier ejection through the TorchServe backend in process: the fake
// transport (test/support/fake_http_transport.h) stands in for the model
// server and the backend's two controllers (health_checks.h) tick on a
// virtual clock, each step settled before the next, so every ejection and
// probe falls at a time the test names. A server whose predictions hang, or
// answer 200 with one prediction too few or an undecodable body, while /ping
// passes is ejected and stays out with a doubling backoff (each ended by a
// probe batch that fails) instead of flapping back at every backoff; once
// repaired it returns at the end of its backoff with a passing probe;
// per-input rejections never eject. outlier_ejection_test.cc keeps the cases
// that run `lull serve`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "test/support/backend_test_support.h"
#include "test/support/fake_http_transport.h"

using namespace lull::torchserve;
using lull::net::HttpRequest;
using lull::net::HttpResponse;
using lull::serve::testing::ResultLog;
using lull::test::FakeHttpTransport;
using std::chrono::milliseconds;

namespace {

constexpr std::int64_t kMs = 1000;  // virtual microseconds per millisecond
const std::string kUrl = "http://10.0.0.1:8080";

// How the fake model server answers a batch of one input.
enum class Predictions { kGood, kHang, kShort, kMalformed, kRejected };

// One worker on the fake whose /ping always passes and whose batches answer
// as `mode` says (changed at any step), its backend on a virtual clock with
// its controllers driven by run_until().
struct EjectionRig {
  lull::core::VirtualClock clock;
  std::shared_ptr<std::atomic<Predictions>> mode = std::make_shared<std::atomic<Predictions>>(Predictions::kGood);
  FakeHttpTransport* http = nullptr;
  // Holds the controllers (run_until() ticks them in time order). It
  // outlives the backend on purpose: controllers leave their loop when
  // destroyed, so the loop's destructor reads nothing of them.
  lull::core::ControlLoop loop{clock};
  std::unique_ptr<TorchServeBackend> backend;
  ResultLog log;
  std::atomic<int> downs{0}, ups{0};
  int sent = 0;

  explicit EjectionRig(TorchServeOptions opts) {
    auto owned = std::make_unique<FakeHttpTransport>();
    http = owned.get();
    http->route("GET", kUrl + "/ping",
                [](const HttpRequest&) { return FakeHttpTransport::reply(200, "{\"status\":\"Healthy\"}"); });
    http->route("POST", kUrl + "/predictions/fast", [mode = mode](const HttpRequest& r) {
      switch (mode->load()) {
        case Predictions::kHang: {  // as the transport answers once the batch's timeout has passed
          HttpResponse late;
          late.error = "Timeout was reached";
          late.timed_out = true;
          late.elapsed_us = r.timeout_ms * 1000;
          return late;
        }
        case Predictions::kShort:
          return FakeHttpTransport::reply(200, "{\"predictions\":[]}");
        case Predictions::kMalformed:
          return FakeHttpTransport::reply(200, "not json");
        case Predictions::kRejected:  // the model refuses this one input inside a 200
          return FakeHttpTransport::reply(
              200, "{\"predictions\":[{\"error\":{\"code\":400,\"type\":\"InvalidInput\",\"message\":\"bad\"}}]}");
        case Predictions::kGood:
          break;
      }
      return FakeHttpTransport::reply(200, "{\"predictions\":[{\"class\":1}]}");
    });
    opts.clock = &clock;
    backend = std::make_unique<TorchServeBackend>(std::vector<WorkerEndpoint>{{kUrl, kUrl}},
                                                  std::vector<std::string>{"fast"}, opts, std::move(owned));
    backend->set_completion_handler([this](const lull::core::BatchResult& r) { log.add(r); });
    REQUIRE(backend->start(&loop) == 1);
    backend->set_health_handler([this](int, bool up) { ++(up ? ups : downs); });
  }
  ~EjectionRig() { backend->stop(); }

  // Sends worker 0 a one-query batch and returns its result once reported.
  lull::core::BatchResult send_one() {
    lull::core::BatchRequest b;
    b.queries = {static_cast<lull::core::QueryId>(++sent)};
    b.inputs = {std::make_shared<const std::string>("x")};
    backend->start_batch(b);
    const auto results = log.wait_for(static_cast<std::size_t>(sent), milliseconds(10000));
    REQUIRE(results.size() == static_cast<std::size_t>(sent));
    return results.back();
  }
  // Ticks the controller due first, at its time, until `until_ms`; every
  // tick's requests are answered before the next one.
  void run_until(std::int64_t until_ms) {
    lull::core::Controller* const controllers[] = {&backend->health_checker(), &backend->outlier_ejector()};
    for (;;) {
      lull::core::Controller* next = nullptr;
      for (auto* c : controllers)
        if (!next || c->next_tick_us() < next->next_tick_us()) next = c;
      const std::int64_t due = next->next_tick_us();
      if (due > until_ms * kMs) break;
      clock.advance_to_us(std::max(clock.now_us(), due));
      next->tick(clock.now_us());
      REQUIRE(http->wait_idle());
    }
    clock.advance_to_us(std::max(clock.now_us(), until_ms * kMs));
  }
  // Keeps one batch at a time on the worker while it is up, as the dispatcher does.
  void drive() {
    while (backend->worker_up(0)) send_one();
  }
};

}  // namespace

TEST_CASE("outlier ejection (virtual clock): hanging predictions with a healthy /ping eject once and stay out",
          "[serve][backend][fault][outlier]") {
  TorchServeOptions opts;
  opts.batch_timeout_ms = 200;
  opts.health_interval_ms = 100;  // a passing ping every 100 ms: a ping alone put the worker back each time
  opts.outlier.eject_after_failures = 2;
  opts.outlier.base_ms = 1000;
  opts.outlier.max_ms = 30000;
  EjectionRig rig(opts);
  *rig.mode = Predictions::kHang;
  rig.drive();
  CHECK(rig.sent == 2);  // out after 2 timeouts, at 0 ms
  rig.run_until(5000);
  // Its probe batches time out at 1 s and 3 s: ejected again for 2 s, then
  // 4 s (until 7 s), never back in rotation. (A passing ping alone put it
  // back about 16 times in 5 s.)
  for (const auto& r : rig.log.wait_for(0, milliseconds(0))) CHECK_FALSE(r.ok);
  CHECK(rig.downs == 1);
  CHECK(rig.ups == 0);
  CHECK(rig.backend->stats(0).ejections == 3);
  CHECK(rig.backend->next_probe_us() == 7000 * kMs);
}

TEST_CASE("outlier ejection (virtual clock): one prediction too few ejects the worker, backoff doubling",
          "[serve][backend][fault][outlier]") {
  // The probe's finding: /ping passes while every batch fails, and the worker
  // went down and up again at every backoff (5 times in 20 s).
  TorchServeOptions opts;
  opts.health_interval_ms = 50;
  opts.outlier.eject_after_failures = 3;
  opts.outlier.base_ms = 300;
  EjectionRig rig(opts);
  *rig.mode = Predictions::kShort;
  rig.drive();
  CHECK(rig.sent == 3);
  // Ejections of 300, 600, 1200 and 2400 ms, each ended by a failed probe:
  // probes at 300, 900 and 2100 ms, the fourth ejection until 4500 ms.
  rig.run_until(4000);
  INFO("last error " << rig.backend->stats(0).last_error);
  CHECK(rig.downs == 1);
  CHECK(rig.ups == 0);
  CHECK(rig.backend->stats(0).ejections == 4);
  CHECK(rig.backend->next_probe_us() == 4500 * kMs);
  CHECK(rig.backend->stats(0).last_error.find("probe batch: batch response has 0 predictions for 1 inputs") == 0);
}

TEST_CASE("outlier ejection (virtual clock): an ejected worker returns at the end of its backoff with a passing probe",
          "[serve][backend][fault][outlier]") {
  TorchServeOptions opts;
  opts.health_interval_ms = 50;
  opts.outlier.eject_after_failures = 3;
  opts.outlier.base_ms = 300;
  EjectionRig rig(opts);
  *rig.mode = Predictions::kMalformed;
  for (int i = 1; i <= 3; ++i) {
    CHECK(rig.backend->worker_up(0));  // not out before the third failure
    CHECK_FALSE(rig.send_one().ok);
  }
  CHECK_FALSE(rig.backend->worker_up(0));
  // Pings pass, the backoff ends, but the probes (200 with an undecodable
  // body) at 300 and 900 ms fail: out until 2100 ms.
  rig.run_until(1500);
  CHECK_FALSE(rig.backend->worker_up(0));
  CHECK(rig.backend->stats(0).ejections == 3);
  // Repaired: still out until its backoff is over, back with the probe then.
  *rig.mode = Predictions::kGood;
  rig.run_until(2099);
  CHECK_FALSE(rig.backend->worker_up(0));
  rig.run_until(2100);
  REQUIRE(rig.backend->worker_up(0));
  CHECK(rig.send_one().ok);
  CHECK(rig.downs == 1);
  CHECK(rig.ups == 1);
}

TEST_CASE("outlier ejection (virtual clock): inputs the model rejects never eject the worker",
          "[serve][backend][outlier]") {
  TorchServeOptions opts;
  opts.outlier.eject_after_failures = 1;
  EjectionRig rig(opts);
  *rig.mode = Predictions::kRejected;
  for (int i = 1; i <= 4; ++i) {
    const auto r = rig.send_one();
    CHECK(r.ok);
    REQUIRE(r.input_status.size() == 1);
    CHECK(r.input_status[0] == 400);
  }
  rig.run_until(5000);
  CHECK(rig.backend->worker_up(0));
  CHECK(rig.backend->stats(0).ejections == 0);
  CHECK(rig.downs == 0);
}
