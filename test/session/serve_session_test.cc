// The serve session against a fake backend, a fake health source and a
// virtual clock: no sockets, no Python, no timing. Each batch the Dispatcher
// starts is recorded and finished when the test says so (session_fakes.h).
// The /metrics test is serve_metrics_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/clock.h"
#include "runtime/core/load_monitor.h"
#include "runtime/core/policy_table.h"
#include "runtime/session/serve_session.h"
#include "runtime/core/worker_health.h"
#include "test/support/session_fakes.h"
#include "test/support/session_test_support.h"

using namespace lull::frontend;
using namespace lull::session;
using namespace lull::serve::testing;
using lull::core::BatchRequest;
using lull::core::BatchResult;
using lull::core::QueryId;

TEST_CASE("serve session: each query gets its own prediction from the batch result", "[serve][session]") {
  Rig rig(2);
  auto a1 = rig.session->submit("first");   // worker 0, alone: big
  auto a2 = rig.session->submit("second");  // worker 1, alone: big
  auto a3 = rig.session->submit("third");   // queued on worker 0
  auto a5 = rig.session->submit("fifth");   // worker 1's queue
  auto a4 = rig.session->submit("fourth");  // worker 0's queue: 3 and 4
  REQUIRE(rig.backend.started.size() == 2);
  CHECK(rig.backend.sent_inputs[0] == std::vector<std::string>{"first"});
  CHECK(rig.backend.started[0].model == 1);

  rig.backend.succeed(0, {"{\"class\":1}"});
  REQUIRE(ready(a1));
  const Answer r1 = a1.get();
  CHECK(r1.http_status == 200);
  CHECK(r1.body == "{\"class\":1}");
  CHECK(r1.model == "big");
  CHECK(r1.worker == 0);
  CHECK_FALSE(r1.retried);
  CHECK_FALSE(ready(a2));

  // Worker 0 then runs queries 3 and 4 as one batch (a queue of 2 falls back
  // to small); each gets the prediction in its position.
  REQUIRE(rig.backend.started.size() == 3);
  CHECK(rig.backend.started[2].model == 0);
  CHECK(rig.backend.sent_inputs[2] == std::vector<std::string>{"third", "fourth"});
  rig.backend.succeed(2, {"\"three\"", "\"four\""});
  CHECK(a3.get().body == "\"three\"");
  const Answer r4 = a4.get();
  CHECK(r4.body == "\"four\"");
  CHECK(r4.model == "small");
  CHECK(metric_line(*rig.session, "lull_answered_total{model=\"small\"}") == "lull_answered_total{model=\"small\"} 2");
  CHECK(metric_line(*rig.session, "lull_answered_total{model=\"big\"}") == "lull_answered_total{model=\"big\"} 1");
  rig.backend.succeed(1, {"\"two\""});
  CHECK(a2.get().body == "\"two\"");
  rig.backend.succeed(3, {"\"five\""});
  CHECK(a5.get().body == "\"five\"");
  CHECK(rig.session->pending() == 0);  // answered queries are forgotten, inputs and all
}

TEST_CASE("serve session: a failed batch is retried once on the next worker, on its model while slack allows",
          "[serve][session][retry]") {
  Rig rig(3);
  auto a1 = rig.session->submit("q1");  // worker 0
  rig.backend.fail(0, "worker 0 broke");
  REQUIRE(rig.backend.started.size() == 2);
  CHECK(rig.backend.started[1].worker == 1);  // the next worker after 0
  CHECK(rig.backend.started[1].model == 1);   // 20 ms fits in the 500 ms left
  CHECK(rig.backend.sent_inputs[1] == std::vector<std::string>{"q1"});
  CHECK_FALSE(ready(a1));  // the failure alone answers nothing
  rig.backend.succeed(1, {"\"ok\""});
  const Answer r = a1.get();
  CHECK(r.http_status == 200);
  CHECK(r.body == "\"ok\"");
  CHECK(r.worker == 1);
  CHECK(r.retried);
  CHECK(metric_line(*rig.session, "lull_retried_total") == "lull_retried_total 1");
  CHECK(metric_line(*rig.session, "lull_failed_total") == "lull_failed_total 0");
}

TEST_CASE("serve session: a retry whose slack is gone runs on the fastest model, after the busy worker's batch",
          "[serve][session][retry]") {
  Rig rig(2);
  auto a1 = rig.session->submit("q1");  // worker 0, deadline 500 ms
  auto a2 = rig.session->submit("q2");  // worker 1
  auto a3 = rig.session->submit("q3");  // worker 0's queue
  rig.clock.advance_to_us(485'000);     // 15 ms left: big (20 ms) no longer fits, small (5 ms) does
  rig.backend.fail(0, "boom");
  // Worker 1 is busy: the retry waits for it rather than doubling up.
  // Worker 0 itself goes on with its queue.
  REQUIRE(rig.backend.started.size() == 3);
  CHECK(rig.backend.started[2].worker == 0);
  CHECK(rig.backend.started[2].queries == std::vector<QueryId>{3});
  rig.backend.succeed(1, {"\"two\""});
  CHECK(a2.get().http_status == 200);
  REQUIRE(rig.backend.started.size() == 4);
  CHECK(rig.backend.started[3].worker == 1);
  CHECK(rig.backend.started[3].queries == std::vector<QueryId>{1});
  CHECK(rig.backend.started[3].model == 0);
  rig.backend.succeed(3, {"\"one\""});
  const Answer r1 = a1.get();
  CHECK(r1.model == "small");
  CHECK(r1.retried);
  rig.backend.succeed(2, {"\"three\""});
  CHECK(a3.get().http_status == 200);
}

TEST_CASE("serve session: a second failure, or no other worker up, is answered 503 with the reason",
          "[serve][session][retry]") {
  SECTION("failed on two workers") {
    Rig rig(2);
    auto a1 = rig.session->submit("q1");
    rig.backend.fail(0, "first cause");
    REQUIRE(rig.backend.started.size() == 2);
    rig.backend.fail(1, "second cause");
    REQUIRE(ready(a1));
    const Answer r = a1.get();
    CHECK(r.http_status == 503);
    CHECK(r.body.find("failed on two workers") != std::string::npos);
    CHECK(r.body.find("second cause") != std::string::npos);
    CHECK(r.retried);
    CHECK(rig.backend.started.size() == 2);  // never a third try
    CHECK(metric_line(*rig.session, "lull_failed_total") == "lull_failed_total 1");
  }
  SECTION("no other worker up") {
    Rig rig(2, {true, false});
    auto a1 = rig.session->submit("q1");
    REQUIRE(rig.backend.started.size() == 1);
    CHECK(rig.backend.started[0].worker == 0);
    rig.backend.fail(0, "only cause");
    REQUIRE(ready(a1));
    const Answer r = a1.get();
    CHECK(r.http_status == 503);
    CHECK(r.body.find("no other worker is up") != std::string::npos);
    CHECK(r.body.find("only cause") != std::string::npos);
    CHECK_FALSE(r.retried);
  }
}

TEST_CASE("serve session: health events take a worker out of rotation and back, in the Dispatcher",
          "[serve][session][health]") {
  Rig rig(2);
  std::vector<std::future<Answer>> answers;
  auto arrive = [&] {  // 1 ms apart, so deadlines are distinct
    rig.clock.advance_to_us(static_cast<std::int64_t>(answers.size()) * 1000);
    answers.push_back(rig.session->submit("q"));
  };
  for (int i = 0; i < 4; ++i) arrive();  // w0: 1 (running), 3; w1: 2 (running), 4
  REQUIRE(rig.backend.started.size() == 2);
  CHECK(metric_line(*rig.session, "lull_worker_queue_length{worker=\"0\"}") ==
        "lull_worker_queue_length{worker=\"0\"} 1");

  rig.health.set(0, false);
  // Worker 0's queue moved to worker 1; /metrics reads the Dispatcher's record.
  CHECK(metric_line(*rig.session, "lull_worker_up{worker=\"0\"").find("} 0") != std::string::npos);
  CHECK(metric_line(*rig.session, "lull_worker_queue_length{worker=\"0\"}") ==
        "lull_worker_queue_length{worker=\"0\"} 0");
  CHECK(metric_line(*rig.session, "lull_worker_queue_length{worker=\"1\"}") ==
        "lull_worker_queue_length{worker=\"1\"} 2");
  for (int i = 0; i < 2; ++i) arrive();  // both to worker 1
  CHECK(metric_line(*rig.session, "lull_worker_queue_length{worker=\"1\"}") ==
        "lull_worker_queue_length{worker=\"1\"} 4");

  // Its batch in flight fails (the backend fails what a down worker held):
  // retried on worker 1 once that is idle, ahead of its queue.
  rig.backend.fail(0, "went down");
  CHECK(rig.backend.started.size() == 2);
  rig.backend.succeed(1, {"\"two\""});
  REQUIRE(rig.backend.started.size() == 3);
  CHECK(rig.backend.started[2].worker == 1);
  CHECK(rig.backend.started[2].queries == std::vector<QueryId>{1});
  rig.backend.succeed(2, {"\"one\""});
  CHECK(answers[0].get().retried);
  REQUIRE(rig.backend.started.size() == 4);  // then worker 1's queue: 3, 4, 5, 6 (fallback, all)
  CHECK(rig.backend.started[3].worker == 1);
  CHECK(rig.backend.started[3].queries == std::vector<QueryId>{3, 4, 5, 6});
  rig.backend.succeed(3, {"3", "4", "5", "6"});
  CHECK(answers[5].get().body == "6");

  rig.health.set(0, true);  // back: round-robin reaches it again
  CHECK(metric_line(*rig.session, "lull_worker_up{worker=\"0\"").find("} 1") != std::string::npos);
  auto a7 = rig.session->submit("q7");
  auto a8 = rig.session->submit("q8");
  REQUIRE(rig.backend.started.size() == 6);
  CHECK(rig.backend.started[4].worker != rig.backend.started[5].worker);
}

TEST_CASE("serve session: workers the health source reports down at start stay out of rotation",
          "[serve][session][health]") {
  Rig rig(3, {true, false, true});
  for (int i = 0; i < 3; ++i) rig.session->submit("q");
  REQUIRE(rig.backend.started.size() == 2);
  CHECK(rig.backend.started[0].worker == 0);
  CHECK(rig.backend.started[1].worker == 2);
  CHECK(metric_line(*rig.session, "lull_worker_queue_length{worker=\"1\"}") ==
        "lull_worker_queue_length{worker=\"1\"} 0");
}

TEST_CASE("serve session: shutdown answers what is waiting and refuses what comes after", "[serve][session]") {
  Rig rig(1);
  auto a1 = rig.session->submit("q1");
  rig.session->shutdown();
  REQUIRE(ready(a1));
  CHECK(a1.get().http_status == 503);
  auto a2 = rig.session->submit("q2");
  REQUIRE(ready(a2));
  CHECK(a2.get().http_status == 503);
  CHECK(rig.backend.started.size() == 1);
  rig.backend.succeed(0, {"\"late\""});  // a late result for an answered query is ignored
  CHECK(rig.session->pending() == 0);
}

TEST_CASE("serve session: a health source for another worker count is refused", "[serve][session]") {
  const auto table = tiny_session_table(2);
  FakeHealth health(3);
  FakeBackend backend;
  lull::core::VirtualClock clock;
  CHECK_THROWS_WITH(ServeSession(table, backend, health, clock), Catch::Contains("compiled for 2 workers"));
}

TEST_CASE("serve session: an input the model rejected gets the model's error, and the batch and worker carry on",
          "[serve][session][input-error]") {
  Rig rig(2);
  auto a1 = rig.session->submit("first");           // worker 0, alone
  auto a2 = rig.session->submit("second");          // worker 1, alone
  auto a3 = rig.session->submit("LULL-MALFORMED");  // worker 0's queue
  auto a4 = rig.session->submit("fourth");          // worker 1's queue
  auto a5 = rig.session->submit("fifth");           // worker 0's queue: 3 and 5 as one batch
  rig.backend.succeed(0, {"\"one\""});
  REQUIRE(rig.backend.started.size() == 3);
  REQUIRE(rig.backend.sent_inputs[2] == std::vector<std::string>{"LULL-MALFORMED", "fifth"});
  const std::string error = R"({"code":400,"type":"InvalidInput","message":"input 0: malformed"})";
  rig.backend.succeed_with_rejects(2, {error, "\"five\""}, {400, 0});

  REQUIRE(ready(a3));
  const Answer r3 = a3.get();
  CHECK(r3.http_status == 400);
  CHECK(r3.body == error);
  CHECK(r3.error_is_json);
  CHECK_FALSE(r3.retried);
  const Answer r5 = a5.get();
  CHECK(r5.http_status == 200);
  CHECK(r5.body == "\"five\"");
  // Not retried, and the worker stays in rotation and takes the next batch.
  CHECK(rig.backend.started.size() == 3);
  CHECK(metric_line(*rig.session, "lull_retried_total") == "lull_retried_total 0");
  CHECK(metric_line(*rig.session, "lull_worker_up{worker=\"0\"").find("} 1") != std::string::npos);
  auto a6 = rig.session->submit("sixth");    // round-robin: worker 1's queue (busy)
  auto a7 = rig.session->submit("seventh");  // worker 0, idle again: starts at once
  REQUIRE(rig.backend.started.size() == 4);
  CHECK(rig.backend.started[3].worker == 0);
  CHECK(rig.backend.sent_inputs[3] == std::vector<std::string>{"seventh"});
  // Finish the rest; every other query is answered with its prediction.
  for (size_t b = 1; b < rig.backend.started.size(); ++b) {
    if (b == 2) continue;
    rig.backend.succeed(b, std::vector<std::string>(rig.backend.started[b].queries.size(), "\"p\""));
  }
  for (auto* f : {&a1, &a2, &a4, &a6, &a7}) {
    REQUIRE(ready(*f));
    CHECK(f->get().http_status == 200);
  }
}

TEST_CASE("serve session: healthy while some worker is in rotation, as /ping reports it", "[serve][session][health]") {
  Rig rig(2, {true, false});
  CHECK(rig.session->healthy());
  rig.health.set(0, false);
  CHECK_FALSE(rig.session->healthy());
  rig.health.set(1, true);
  CHECK(rig.session->healthy());
  rig.session->shutdown();
  CHECK_FALSE(rig.session->healthy());
}

namespace {
// 300 queries at once on one worker: the first starts on big (20 ms), the
// rest queue behind it.
std::vector<std::future<Answer>> burst(Rig& rig, int n) {
  std::vector<std::future<Answer>> answers;
  for (int i = 0; i < n; ++i) answers.push_back(rig.session->submit("q" + std::to_string(i)));
  return answers;
}
}  // namespace

TEST_CASE("serve session: with --reject-late, a burst beyond the fastest model gets 503 with Retry-After at once",
          "[serve][session][admission]") {
  ServeOptions options;
  options.reject_late = true;
  Rig rig(1, {}, options);
  auto answers = burst(rig, 300);
  // Query k (1-based among the queued) completes at the earliest at 20 ms
  // (big's batch in flight) + drain(k) on small at 8 ms per batch of 4: in
  // time (500 ms) up to k = 240 (20 + 60 * 8 = 500), late from k = 241
  // (20 + 480 + 5 = 505). So 1 + 240 admitted, 59 refused.
  int refused = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (i < 241) {
      CHECK_FALSE(ready(answers[i]));
      continue;
    }
    REQUIRE(ready(answers[i]));
    const Answer a = answers[i].get();
    CHECK(a.http_status == 503);
    CHECK(a.retry_after_s == 1);  // 505 ms of backlog, rounded up
    CHECK(a.body.find("overloaded") != std::string::npos);
    ++refused;
  }
  CHECK(refused == 59);
  CHECK(rig.session->pending() == 241);  // refused queries are never kept
  CHECK(metric_line(*rig.session, "lull_rejected_total") == "lull_rejected_total 59");
  CHECK(metric_line(*rig.session, "lull_queries_total") == "lull_queries_total 300");
  CHECK(metric_line(*rig.session, "lull_failed_total") == "lull_failed_total 0");

  // Once big's batch is done the 240 run as one batch on small; a new query
  // now waits only for that (8 ms by the table) and is admitted.
  rig.clock.advance_to_us(20'000);
  rig.backend.succeed(0, {"\"0\""});
  REQUIRE(rig.backend.started.size() == 2);
  CHECK(rig.backend.started[1].queries.size() == 240);
  auto late_comer = rig.session->submit("late comer");
  CHECK_FALSE(ready(late_comer));
  CHECK(metric_line(*rig.session, "lull_rejected_total") == "lull_rejected_total 59");
}

TEST_CASE("serve session: without --reject-late the same burst is all served, late, and counted as violations",
          "[serve][session][admission]") {
  Rig rig(1);
  auto answers = burst(rig, 300);
  for (auto& a : answers) CHECK_FALSE(ready(a));
  rig.clock.advance_to_us(600'000);  // past the 500 ms SLO for all of them
  rig.backend.succeed(0, {"\"0\""});
  REQUIRE(rig.backend.started.size() == 2);
  REQUIRE(rig.backend.started[1].queries.size() == 299);
  rig.backend.succeed(1, std::vector<std::string>(299, "\"x\""));
  for (auto& a : answers) {
    REQUIRE(ready(a));
    CHECK(a.get().http_status == 200);
  }
  CHECK(metric_line(*rig.session, "lull_rejected_total") == "lull_rejected_total 0");
  CHECK(metric_line(*rig.session, "lull_violations_total{model=\"small\"}") ==
        "lull_violations_total{model=\"small\"} 299");
  CHECK(metric_line(*rig.session, "lull_violations_total{model=\"big\"}") == "lull_violations_total{model=\"big\"} 1");
}

TEST_CASE("serve session: time a query spent in the front end counts towards its deadline", "[serve][session]") {
  Rig rig(1);
  rig.clock.advance_to_us(1'000'000);
  std::promise<Answer> late, on_time;
  // Header complete 600 ms ago (the SLO is 500 ms): late however fast the batch.
  rig.session->serve_async("waited", 600'000, [&](Answer a) { late.set_value(std::move(a)); });
  REQUIRE(rig.backend.started.size() == 1);
  rig.clock.advance_to_us(1'010'000);
  rig.backend.succeed(0, {"\"w\""});
  CHECK(late.get_future().get().http_status == 200);
  rig.session->serve_async("fresh", 0, [&](Answer a) { on_time.set_value(std::move(a)); });
  REQUIRE(rig.backend.started.size() == 2);
  rig.clock.advance_to_us(1'020'000);
  rig.backend.succeed(1, {"\"f\""});
  CHECK(on_time.get_future().get().http_status == 200);
  CHECK(metric_line(*rig.session, "lull_violations_total{model=\"big\"}") == "lull_violations_total{model=\"big\"} 1");
  CHECK(metric_line(*rig.session, "lull_satisfied_total{model=\"big\"}") == "lull_satisfied_total{model=\"big\"} 1");
}

TEST_CASE("serve session: the reaper ticks at the earliest give-up time, skipping queries answered meanwhile",
          "[serve][session]") {
  ServeOptions o;
  o.answer_timeout_ms = 50;
  Rig rig(1, {}, o);
  rig.clock.advance_to_us(1'000'000);
  auto answered = rig.session->submit("answered");
  rig.clock.advance_to_us(1'020'000);
  auto late = rig.session->submit("late");  // queued behind the first batch
  REQUIRE(rig.backend.started.size() == 1);
  rig.backend.succeed(0, {"\"a\""});
  CHECK(answered.get().http_status == 200);
  REQUIRE(rig.loop.run_next_due(1'050'000));  // the answered one's time: dropped, nothing answered
  CHECK(late.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
  CHECK_FALSE(rig.loop.run_next_due(1'069'999));
  REQUIRE(rig.loop.run_next_due(1'070'000));
  REQUIRE(late.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(late.get().http_status == 504);
  CHECK_FALSE(rig.loop.run_next_due(10'000'000));  // none left: the reaper waits to be woken
}

TEST_CASE("serve session: without a loop given, its own real-time loop answers 504", "[serve][session]") {
  ServeOptions o;
  o.answer_timeout_ms = 50;
  const lull::core::PolicyTable table = tiny_session_table(1);
  FakeHealth health(1);
  FakeBackend backend;
  lull::core::WallClock clock;
  ServeSession session(table, backend, health, clock, o);
  auto never = session.submit("never answered");
  REQUIRE(never.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK(never.get().http_status == 504);
}

TEST_CASE("serve session: an asynchronous query with no answer gets 504 at answer_timeout_ms", "[serve][session]") {
  ServeOptions o;
  o.answer_timeout_ms = 50;
  Rig rig(1, {}, o);
  rig.clock.advance_to_us(1'000'000);
  auto never = rig.session->submit("never answered");  // the batch never completes
  CHECK_FALSE(rig.loop.run_next_due(1'049'999));       // the session's clock: not yet
  CHECK(never.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
  REQUIRE(rig.loop.run_next_due(1'050'000));
  CHECK(rig.clock.now_us() == 1'050'000);
  REQUIRE(never.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  const Answer a = never.get();
  CHECK(a.http_status == 504);
  CHECK(metric_line(*rig.session, "lull_failed_total") == "lull_failed_total 1");
}

// `lull serve --shard I/G` sets arrival_thinning = G (cli/serve_shard.cc,
// test/cli/serve_shard_test.cc): the session's load estimate is then the
// shard's rule of runtime/core/load_monitor.h, the one `lull simulate --shards`
// runs; unsharded, the plain count.
TEST_CASE("serve session: a shard's load estimate follows the load monitor's shard rule", "[serve][session][shard]") {
  for (int thinning : {1, 4}) {
    INFO("arrival_thinning " << thinning);
    ServeOptions options;
    options.arrival_thinning = thinning;
    Rig rig(2, {}, options);
    lull::core::LoadMonitor expected(500'000, lull::core::BurstinessEstimator::kDefaultWindow, thinning);
    std::vector<std::future<Answer>> answers;
    for (std::int64_t t : {100'000, 230'000, 310'000, 480'000, 650'000, 700'000, 1'020'000}) {
      rig.clock.advance_to_us(t);
      answers.push_back(rig.session->submit("q"));
      expected.record_arrival(t);
      const double want = expected.estimate_qps(t);
      const std::string line = metric_line(*rig.session, "lull_load_estimate_queries_per_second ");
      REQUIRE_FALSE(line.empty());
      CHECK(std::stod(line.substr(line.rfind(' ') + 1)) == want);
    }
    // At 1020 ms the window (520, 1020] holds 650, 700, 1020: the plain count
    // is 6 QPS; a shard counts 2 gaps and 130 of the 170 ms from 480 to 650.
    CHECK(expected.estimate_qps(1'020'000) == Approx(thinning == 1 ? 6.0 : (2 + 130.0 / 170) / 0.5));
    rig.session->shutdown();
  }
}
