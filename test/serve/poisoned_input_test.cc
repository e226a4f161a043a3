// The poisoned-input run as a test: malformed inputs among steady load, over
// the serve layer assembled as `lull serve` assembles it against stand-in
// model servers that reject them as the TorchServe handler does (a per-input
// error in the batch answer). Before per-input errors, each one failed its
// whole batch with 503, took a worker down and cost dozens of other queries.
// The verdicts count answers and failed batches; none depends on timing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "model_server_process.h"
#include "session_test_support.h"
#include "runtime/serve/frontend.h"
#include "runtime/serve/http_client.h"
#include "runtime/serve/query_inputs.h"
#include "runtime/serve/serve_session.h"
#include "runtime/serve/torchserve_backend.h"

using namespace lull::serve;
using namespace lull::serve::testing;
using std::chrono::milliseconds;

TEST_CASE("lull serve path: malformed inputs get 400 and cost no other query nor any worker",
          "[serve][e2e][input-error]") {
  ModelServerProcess s0({"--fake", "small:5:1", "--fake", "big:20:2"});
  ModelServerProcess s1({"--fake", "small:5:1", "--fake", "big:20:2"});
  const auto table = tiny_session_table(2);
  TorchServeOptions opts;
  opts.health_interval_ms = 100;
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

  // 500 queries at about 100 qps; 3 of them malformed.
  const int n = 500;
  const std::vector<int> poisoned = {50, 250, 251};
  std::vector<std::future<HttpResponse>> answers;
  for (int i = 0; i < n; ++i) {
    auto p = std::make_shared<std::promise<HttpResponse>>();
    answers.push_back(p->get_future());
    HttpRequest r;
    r.method = "POST";
    r.url = base + "/predictions/classify";
    const bool bad = std::find(poisoned.begin(), poisoned.end(), i) != poisoned.end();
    r.body = (bad ? "LULL-MALFORMED " : "query-") + std::to_string(i);
    r.timeout_ms = 20000;
    client.send(r, [p](HttpResponse resp) { p->set_value(std::move(resp)); });
    std::this_thread::sleep_for(milliseconds(10));
  }
  int ok = 0, rejected = 0, other = 0, retried = 0;
  for (int i = 0; i < n; ++i) {
    REQUIRE(answers[i].wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    const auto r = answers[i].get();
    REQUIRE(r.error.empty());
    retried += r.header("x-lull-retried") == "1";
    if (std::find(poisoned.begin(), poisoned.end(), i) != poisoned.end()) {
      INFO("query " << i << ": " << r.status << " " << r.body);
      CHECK(r.status == 400);
      CHECK(r.body.rfind(R"({"code":400,"type":"InvalidInput","message":"input )", 0) == 0);
      rejected += r.status == 400;
    } else if (r.status == 200) {
      ++ok;
    } else {
      INFO("query " << i << ": " << r.status << " " << r.body);
      CHECK(r.status == 200);
      ++other;
    }
  }
  CHECK(ok == n - 3);
  CHECK(rejected == 3);
  CHECK(other == 0);
  CHECK(retried == 0);
  for (int w = 0; w < 2; ++w) {
    const WorkerStats st = backend.stats(w);
    INFO("worker " << w << ": " << st.last_error);
    CHECK(st.up);
    CHECK(st.batches_failed == 0);  // so never marked down
  }
  CHECK(session.healthy());
  session.shutdown();
  fe.stop();
  backend.stop();
}
