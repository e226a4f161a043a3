// The serve layer assembled as `lull serve` assembles it (TorchServe backend
// as backend and health source, session, front end) against real stand-in
// model servers: one is killed mid-run. The session's own logic is tested
// without sockets in serve_session_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "test/server/serve_stack_support.h"
#include "runtime/net/http_client.h"

using namespace lull::net;
using namespace lull::serve::testing;
using std::chrono::milliseconds;

namespace {

std::string metric_line(HttpClient& c, const std::string& base, const std::string& prefix) {
  HttpRequest g;
  g.url = base + "/metrics";
  return lull::serve::testing::metric_line(c.fetch(g).body, prefix);
}

}  // namespace

TEST_CASE("lull serve path: killing a model server mid-run loses no query and it rejoins after restart",
          "[serve][e2e][fault]") {
  ServeStack stack;
  REQUIRE(stack.workers_up_at_start == 2);
  ModelServerProcess& s0 = stack.s0;
  const std::string& base = stack.base;
  HttpClient client;

  // 60 queries over ~1.2 s; server 0 dies a third of the way in.
  std::vector<std::future<HttpResponse>> answers;
  for (int i = 0; i < 60; ++i) {
    if (i == 20) s0.kill_now();
    answers.push_back(stack.post(client, "query-" + std::to_string(i)));
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
}
