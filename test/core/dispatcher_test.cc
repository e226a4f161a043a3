// lull's dispatcher and the baselines' FIFO dispatcher against a fake backend
// that records batches and completes them when the test says so.
#include <catch2/catch.hpp>

#include <vector>

#include "runtime/core/dispatcher.h"
#include "runtime/core/fifo_dispatcher.h"
#include "test/support/runtime_test_support.h"

namespace {

using namespace lull::core;

class FakeBackend final : public Backend {
 public:
  void start_batch(const BatchRequest& b) override { started.push_back(b); }
  void finish(int index) { end(index, true); }
  void fail(int index) { end(index, false); }
  void end(int index, bool ok) {
    const BatchRequest& b = started[static_cast<std::size_t>(index)];
    BatchResult r;
    r.worker = b.worker;
    r.model = b.model;
    r.queries = b.queries;
    r.ok = ok;
    report(r);
  }
  std::vector<BatchRequest> started;
};

}  // namespace

TEST_CASE("dispatcher: round-robin, earliest deadlines first, one batch per worker", "[runtime][dispatcher]") {
  const PolicyTable table = lull::test::tiny_table();  // 2 workers, SLO 150 ms
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  std::vector<std::pair<QueryId, std::int64_t>> done;
  d.on_batch_done([&](const BatchResult& r, std::int64_t now) {
    for (auto q : r.queries) done.emplace_back(q, now);
  });

  for (QueryId id = 0; id < 5; ++id) {  // arrivals at 0, 1, 2, 3, 4 ms
    clock.advance_to_us(static_cast<std::int64_t>(id) * 1000);
    d.on_arrival(id);
  }
  // Queries 0 and 1 went to idle workers 0 and 1 at once with full slack:
  // state (1, 2) = index 2 -> model 0, batch 1.
  REQUIRE(backend.started.size() == 2);
  CHECK(backend.started[0].worker == 0);
  CHECK(backend.started[0].queries == std::vector<QueryId>{0});
  CHECK(backend.started[1].worker == 1);
  CHECK(backend.started[1].queries == std::vector<QueryId>{1});
  CHECK(d.queued(0) == 2);  // queries 2 and 4
  CHECK(d.queued(1) == 1);  // query 3

  // Worker 0 finishes at 60 ms: query 2 (deadline 152 ms) has 92 ms of slack
  // -> state (2, 1) = index 4 -> model 0, batch 2, serving 2 then 4.
  clock.advance_to_us(60'000);
  backend.finish(0);
  REQUIRE(backend.started.size() == 3);
  CHECK(backend.started[2].worker == 0);
  CHECK(backend.started[2].model == 0);
  CHECK(backend.started[2].queries == std::vector<QueryId>{2, 4});
  REQUIRE(done.size() == 1);
  CHECK(done[0] == std::make_pair(QueryId{0}, std::int64_t{60'000}));

  // Worker 1 finishes at 110 ms: query 3 has 43 ms of slack -> (1, 0) = index 0 -> model 0.
  clock.advance_to_us(110'000);
  backend.finish(1);
  REQUIRE(backend.started.size() == 4);
  CHECK(backend.started[3].queries == std::vector<QueryId>{3});
  CHECK(backend.started[3].model == 0);
  CHECK(d.usage()[0].queries == 5);
  CHECK(d.usage()[0].decisions == 4);
}

TEST_CASE("dispatcher: a long queue takes the fallback and serves all", "[runtime][dispatcher]") {
  const PolicyTable table = lull::test::tiny_table();
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  for (QueryId id = 0; id < 10; ++id) d.on_arrival(id);  // worker 0 gets 0,2,4,6,8
  clock.advance_to_us(20'000);
  backend.finish(0);  // worker 0 now holds 4 queries > N = 2
  const auto& b = backend.started.back();
  CHECK(b.worker == 0);
  CHECK(b.model == 0);
  CHECK(b.queries == std::vector<QueryId>{2, 4, 6, 8});
  CHECK(d.usage()[0].fallbacks == 1);  // 10 arrivals in 0.5 s: 20 QPS, grid point 0
}

TEST_CASE("dispatcher: round-robin skips a worker marked unavailable and hands over its queue",
          "[runtime][dispatcher][availability]") {
  const PolicyTable table = lull::test::tiny_table();  // 2 workers
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  for (QueryId id = 0; id < 5; ++id) {                          // w0: 0 (running), 2, 4; w1: 1 (running), 3
    clock.advance_to_us(static_cast<std::int64_t>(id) * 1000);  // distinct deadlines
    d.on_arrival(id);
  }
  REQUIRE(backend.started.size() == 2);
  REQUIRE(d.queued(0) == 2);
  REQUIRE(d.queued(1) == 1);

  d.set_worker_available(0, false);  // e.g. its model server failed a ping
  CHECK_FALSE(d.worker_available(0));
  CHECK(d.queued(0) == 0);  // 2 and 4 moved to worker 1, which is busy: nothing starts yet
  CHECK(d.queued(1) == 3);
  CHECK(backend.started.size() == 2);
  for (QueryId id = 5; id < 9; ++id) {  // all four to worker 1
    clock.advance_to_us(static_cast<std::int64_t>(id) * 1000);
    d.on_arrival(id);
  }
  CHECK(d.queued(0) == 0);
  CHECK(d.queued(1) == 7);

  backend.finish(0);  // worker 0's batch in flight ends: it starts nothing
  CHECK(backend.started.size() == 2);
  clock.advance_to_us(20'000);
  backend.finish(1);  // worker 1 serves the earliest deadlines first: 2, 3, ...
  REQUIRE(backend.started.size() == 3);
  CHECK(backend.started[2].worker == 1);
  CHECK(backend.started[2].queries.front() == 2);
  for (const auto& b : backend.started) CHECK((b.worker == 1 || b.queries == std::vector<QueryId>{0}));

  d.set_worker_available(0, true);  // back in rotation: the next arrivals reach it
  d.on_arrival(9);
  d.on_arrival(10);
  REQUIRE(backend.started.size() == 4);
  CHECK(backend.started[3].worker == 0);
  CHECK((backend.started[3].queries == std::vector<QueryId>{9} ||
         backend.started[3].queries == std::vector<QueryId>{10}));
}

TEST_CASE("dispatcher: a worker marked unavailable while idle hands its queue to an idle worker at once",
          "[runtime][dispatcher][availability]") {
  const PolicyTable table = lull::test::tiny_table();
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  d.set_worker_available(1, false);
  d.set_worker_available(1, false);  // idempotent
  for (QueryId id = 0; id < 3; ++id) d.on_arrival(id);
  REQUIRE(backend.started.size() == 1);
  CHECK(backend.started[0].worker == 0);
  CHECK(d.queued(0) == 2);
  CHECK(d.queued(1) == 0);
  // Worker 0 goes down while busy and worker 1 comes back idle: 1 and 2 move
  // over and worker 1 starts them.
  d.set_worker_available(1, true);
  d.set_worker_available(0, false);
  REQUIRE(backend.started.size() == 2);
  CHECK(backend.started[1].worker == 1);
  CHECK(backend.started[1].queries.front() == 1);
}

TEST_CASE("dispatcher: with every worker unavailable queries still reach a worker",
          "[runtime][dispatcher][availability]") {
  const PolicyTable table = lull::test::tiny_table();
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  d.set_worker_available(0, false);
  d.set_worker_available(1, false);
  d.on_arrival(0);
  d.on_arrival(1);
  // Plain round-robin: the backend gets them and fails them with a reason,
  // rather than the dispatcher holding them with no way out.
  REQUIRE(backend.started.size() == 2);
  CHECK(backend.started[0].worker != backend.started[1].worker);
}

TEST_CASE("dispatcher: a failed batch is retried once, as one batch, on the next available worker",
          "[runtime][dispatcher][retry]") {
  const PolicyTable table = lull::test::tiny_table();  // 2 workers, SLO 150 ms; slow = model 1, 40 ms
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  std::vector<BatchResult> seen;
  d.on_batch_done([&](const BatchResult& r, std::int64_t) { seen.push_back(r); });
  d.on_arrival(0);  // worker 0
  d.on_arrival(1);  // worker 1
  REQUIRE(backend.started.size() == 2);
  backend.started[0].model = 1;  // as if the selector had chosen slow (40 ms)

  clock.advance_to_us(10'000);
  backend.fail(0);
  CHECK(seen.empty());               // not final: observers wait for the retry
  CHECK(d.retries_waiting(1) == 1);  // worker 1 is busy: the retry waits for it
  CHECK(backend.started.size() == 2);
  backend.finish(1);
  REQUIRE(backend.started.size() == 3);
  CHECK(backend.started[2].worker == 1);
  CHECK(backend.started[2].queries == std::vector<QueryId>{0});
  CHECK(backend.started[2].model == 1);  // 10 + 40 ms <= the 150 ms deadline: same model
  REQUIRE(seen.size() == 1);
  CHECK_FALSE(seen[0].retried);

  backend.fail(2);  // the retry fails: final, no third try
  CHECK(backend.started.size() == 3);
  REQUIRE(seen.size() == 2);
  CHECK_FALSE(seen[1].ok);
  CHECK(seen[1].retried);
  CHECK(seen[1].queries == std::vector<QueryId>{0});
  CHECK_FALSE(d.busy(1));
}

TEST_CASE("dispatcher: a retry past its slack takes model 0, and a worker going down passes its waiting retries on",
          "[runtime][dispatcher][retry]") {
  PolicyTable table = lull::test::tiny_table();
  table.workers = 3;
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  std::vector<BatchResult> seen;
  d.on_batch_done([&](const BatchResult& r, std::int64_t) { seen.push_back(r); });
  // Queries 0..2 to workers 0..2; with full slack the tiny table picks model
  // 0, so the failed batch is made a model-1 batch by hand.
  for (QueryId id = 0; id < 3; ++id) d.on_arrival(id);
  REQUIRE(backend.started.size() == 3);
  backend.started[0].model = 1;  // as if the selector had chosen slow (40 ms)

  clock.advance_to_us(120'000);  // 30 ms left of 150: slow no longer fits
  backend.fail(0);
  CHECK(d.retries_waiting(1) == 1);
  d.set_worker_available(1, false);  // its waiting retry goes to the next available: 2
  CHECK(d.retries_waiting(1) == 0);
  CHECK(d.retries_waiting(2) == 1);
  backend.finish(2);
  REQUIRE(backend.started.size() == 4);
  CHECK(backend.started[3].worker == 2);
  CHECK(backend.started[3].queries == std::vector<QueryId>{0});
  CHECK(backend.started[3].model == 0);
  backend.finish(3);
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].ok);
  CHECK(seen[1].retried);
}

TEST_CASE("dispatcher: a failure with no other worker available is final at once", "[runtime][dispatcher][retry]") {
  const PolicyTable table = lull::test::tiny_table();
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  std::vector<BatchResult> seen;
  d.on_batch_done([&](const BatchResult& r, std::int64_t) { seen.push_back(r); });
  d.set_worker_available(1, false);
  d.on_arrival(0);
  d.on_arrival(1);  // queued behind 0 on worker 0
  backend.fail(0);
  REQUIRE(seen.size() == 1);
  CHECK_FALSE(seen[0].ok);
  CHECK_FALSE(seen[0].retried);
  REQUIRE(backend.started.size() == 2);  // worker 0 goes on with its queue
  CHECK(backend.started[1].queries == std::vector<QueryId>{1});
}

TEST_CASE("dispatcher: what the bouncer reads: next worker, busy time left, deadlines from the arrival given",
          "[runtime][dispatcher][admission]") {
  const PolicyTable table = lull::test::tiny_table();  // 2 workers, SLO 150 ms; fast takes 10 ms alone
  VirtualClock clock;
  FakeBackend backend;
  Dispatcher d(table, clock, backend);
  CHECK(d.peek_next_worker() == 0);
  CHECK(d.busy_remaining_us(0) == 0);  // idle
  d.on_arrival(0);                     // worker 0: full slack -> fast, batch 1 (10 ms)
  CHECK(d.peek_next_worker() == 1);
  d.on_arrival(1);
  CHECK(d.peek_next_worker() == 0);  // peeking does not advance
  CHECK(d.peek_next_worker() == 0);
  clock.advance_to_us(4'000);
  CHECK(d.busy_remaining_us(0) == 6'000);
  d.on_arrival(2);            // worker 0's queue, deadline 154 ms
  d.on_arrival(3);            // worker 1's queue
  d.on_arrival_at(4, 1'000);  // worker 0's queue, deadline 151 ms: ahead of query 2
  clock.advance_to_us(15'000);
  CHECK(d.busy_remaining_us(0) == 0);  // overrun counts as none left
  backend.finish(0);
  REQUIRE(backend.started.size() == 3);
  CHECK(backend.started[2].queries == std::vector<QueryId>{4, 2});
  d.set_worker_available(1, false);  // round-robin is at worker 1; it is skipped
  CHECK(d.peek_next_worker() == 0);
}

TEST_CASE("fifo dispatcher: idle workers take up to the plan's batch from the head", "[runtime][dispatcher]") {
  const PolicyTable table = lull::test::tiny_table();
  VirtualClock clock;
  FakeBackend backend;
  FifoDispatcher d(table, {BaselineChoice{1, 3}, BaselineChoice{1, 3}}, clock, backend);
  for (QueryId id = 0; id < 6; ++id) d.on_arrival(id);
  REQUIRE(backend.started.size() == 2);  // two workers, one query each as they were idle
  CHECK(backend.started[0].queries == std::vector<QueryId>{0});
  CHECK(backend.started[1].queries == std::vector<QueryId>{1});
  CHECK(d.queued() == 4);
  backend.finish(1);
  REQUIRE(backend.started.size() == 3);
  CHECK(backend.started[2].worker == backend.started[1].worker);
  CHECK(backend.started[2].model == 1);
  CHECK(backend.started[2].queries == std::vector<QueryId>{2, 3, 4});
  CHECK(d.queued() == 1);
  CHECK_THROWS(FifoDispatcher(table, {BaselineChoice{0, 1}}, clock, backend));
}
