// The poisoned-input run as a test: malformed inputs among steady load, over
// the serve layer assembled as `lull serve` assembles it against stand-in
// model servers that reject them as the TorchServe handler does (a per-input
// error in the batch answer). Before per-input errors, each one failed its
// whole batch with 503, took a worker down and cost dozens of other queries.
// The verdicts count answers and failed batches; none depends on timing.
// The second case: stand-ins that refuse a whole v2 request for one bad input
// (KServe, MLServer and Triton do): before lull halved refused batches, each
// bad query was sent twice, answered 503, and took the good queries of its
// batches with it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "test/server/serve_stack_support.h"
#include "runtime/net/http_client.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::serve::testing;
using std::chrono::milliseconds;

TEST_CASE("lull serve path: malformed inputs get 400 and cost no other query nor any worker",
          "[serve][e2e][input-error]") {
  ServeStack stack;
  REQUIRE(stack.workers_up_at_start == 2);
  HttpClient client;

  // 500 queries at about 100 qps; 3 of them malformed.
  const int n = 500;
  const std::vector<int> poisoned = {50, 250, 251};
  std::vector<std::future<HttpResponse>> answers;
  for (int i = 0; i < n; ++i) {
    const bool bad = std::find(poisoned.begin(), poisoned.end(), i) != poisoned.end();
    answers.push_back(stack.post(client, (bad ? "LULL-MALFORMED " : "query-") + std::to_string(i)));
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
      CHECK(r.body.rfind(R"({"code":400,"type":"InvalidInput","message":"malformed input)", 0) == 0);
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
    const WorkerStats st = stack.backend.stats(w);
    INFO("worker " << w << ": " << st.last_error);
    CHECK(st.up);
    CHECK(st.batches_failed == 0);  // so never marked down
  }
  CHECK(stack.session.healthy());
}

TEST_CASE("lull serve path (v2, whole-batch refusals): each bad query gets the model's 400, every good one 200",
          "[serve][e2e][input-error][refusal]") {
  ServeStack stack(StackWire::kV2WholeBatchRefusal);
  REQUIRE(stack.workers_up_at_start == 2);
  HttpClient client;
  // 300 queries at about 100 qps; every 20th is malformed, and arrives with
  // two good ones at the same instant, so it shares batches with them.
  const int n = 300;
  std::vector<std::future<HttpResponse>> answers;
  std::vector<char> bad(n, 0);
  for (int i = 0; i < n; ++i) {
    bad[static_cast<size_t>(i)] = i % 20 == 19;
    answers.push_back(
        stack.post(client, (bad[static_cast<size_t>(i)] ? "LULL-MALFORMED " : "query-") + std::to_string(i)));
    if (i % 20 < 18) std::this_thread::sleep_for(milliseconds(10));
  }
  int ok = 0, rejected = 0, other = 0;
  for (int i = 0; i < n; ++i) {
    REQUIRE(answers[i].wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    const auto r = answers[i].get();
    REQUIRE(r.error.empty());
    INFO("query " << i << ": " << r.status << " " << r.body);
    CHECK(r.header("x-lull-retried") != "1");
    if (bad[static_cast<size_t>(i)]) {
      CHECK(r.status == 400);
      CHECK(r.body.rfind(R"({"code":400,"type":"InvalidInput","message":"malformed input)", 0) == 0);
      rejected += r.status == 400;
    } else {
      CHECK(r.status == 200);
      ok += r.status == 200;
      other += r.status != 200;
    }
  }
  CHECK(ok == n - n / 20);
  CHECK(rejected == n / 20);
  CHECK(other == 0);
  for (int w = 0; w < 2; ++w) {
    const WorkerStats st = stack.backend.stats(w);
    INFO("worker " << w << ": " << st.last_error);
    CHECK(st.up);
    CHECK(st.batches_failed == 0);
    CHECK(st.ejections == 0);
  }
}
