// The serve layer assembled as `lull serve` assembles it (TorchServe backend
// as backend and health source, session, front end) against real stand-in
// model servers: one is killed mid-run. The session's own logic is tested
// without sockets in serve_session_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "model_server_process.h"
#include "session_test_support.h"
#include "runtime/policy_table.h"
#include "runtime/serve/frontend.h"
#include "runtime/serve/http_client.h"
#include "runtime/serve/query_inputs.h"
#include "runtime/serve/serve_session.h"
#include "runtime/serve/torchserve_backend.h"

using namespace lull::serve;
using namespace lull::serve::testing;
using std::chrono::milliseconds;

namespace {

std::string metric_line(HttpClient& c, const std::string& base, const std::string& prefix) {
  HttpRequest g;
  g.url = base + "/metrics";
  return testing::metric_line(c.fetch(g).body, prefix);
}

}  // namespace

TEST_CASE("lull serve path: killing a model server mid-run loses no query and it rejoins after restart",
          "[serve][e2e][fault]") {
  ModelServerProcess s0({"--fake", "small:5:1", "--fake", "big:20:2"});
  ModelServerProcess s1({"--fake", "small:5:1", "--fake", "big:20:2"});
  const auto table = tiny_session_table(2);
  TorchServeOptions opts;
  opts.health_interval_ms = 100;
  opts.health_timeout_ms = 300;
  QueryInputs inputs;
  lull::runtime::WallClock clock;
  TorchServeBackend backend({{s0.url(), s0.url()}, {s1.url(), s1.url()}}, {"small", "big"}, inputs, opts);
  ServeSession session(table, backend, backend, inputs, clock);
  REQUIRE(backend.start() == 2);
  FrontendOptions fo;
  fo.port = 0;
  fo.task = "classify";
  Frontend fe(session, fo);
  fe.start();
  const std::string base = "http://127.0.0.1:" + std::to_string(fe.port());
  HttpClient client;

  // 60 queries over ~1.2 s; server 0 dies a third of the way in.
  std::vector<std::future<HttpResponse>> answers;
  for (int i = 0; i < 60; ++i) {
    if (i == 20) s0.kill_now();
    auto p = std::make_shared<std::promise<HttpResponse>>();
    answers.push_back(p->get_future());
    HttpRequest r;
    r.method = "POST";
    r.url = base + "/predictions/classify";
    r.body = "query-" + std::to_string(i);
    r.timeout_ms = 10000;
    client.send(r, [p](HttpResponse resp) { p->set_value(std::move(resp)); });
    std::this_thread::sleep_for(milliseconds(20));
  }
  int ok = 0, clear_errors = 0, retried = 0;
  for (auto& f : answers) {
    REQUIRE(f.wait_for(std::chrono::seconds(15)) == std::future_status::ready);
    auto r = f.get();
    REQUIRE(r.error.empty());  // every query got an HTTP answer
    if (r.status == 200) {
      ++ok;
      CHECK(!r.header("x-lull-model").empty());
      CHECK(r.body.find("\"class\"") != std::string::npos);  // the model server's prediction
      retried += r.header("x-lull-retried") == "1";
    } else {
      CHECK(r.status == 503);
      CHECK(r.body.find("message") != std::string::npos);
      ++clear_errors;
    }
  }
  INFO("ok " << ok << ", errors " << clear_errors << ", retried " << retried);
  CHECK(ok + clear_errors == 60);
  CHECK(ok >= 55);  // the retry path saves (almost) all of them
  CHECK(metric_line(client, base, "lull_worker_up{worker=\"0\"").find("} 0") != std::string::npos);
  CHECK(metric_line(client, base, "lull_queries_total") == "lull_queries_total 60");
  // Once its health was known to be bad, round-robin skipped the dead worker:
  // only what it held or was sent before that failed (about 20 would have
  // without availability in the Dispatcher, every other query of the last 40).
  const std::string failed = metric_line(client, base, "lull_worker_batches_total{worker=\"0\",result=\"failed\"}");
  REQUIRE(!failed.empty());
  INFO(failed);
  CHECK(std::stod(failed.substr(failed.rfind(' ') + 1)) <= 4);
  CHECK(retried <= 4);

  s0.restart();
  bool rejoined = false;
  for (int i = 0; i < 100 && !rejoined; ++i) {
    rejoined = metric_line(client, base, "lull_worker_up{worker=\"0\"").find("} 1") != std::string::npos;
    if (!rejoined) std::this_thread::sleep_for(milliseconds(50));
  }
  CHECK(rejoined);
  session.shutdown();
  fe.stop();
  backend.stop();  // its threads call into the session: stopped before it goes
}
