// Scale-in without losing a query: a simulated pool asks to drain a worker,
// the serving side (here the Dispatcher itself, with the DrainTracker) takes
// it out of rotation, its queued queries move to the other worker, its batch
// in flight finishes, and only then is the worker stopped. Every query is
// answered exactly once and none reaches the drained worker after the drain.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "runtime/core/dispatcher.h"
#include "runtime/core/drain_tracker.h"
#include "runtime/manager/simulated_worker_pool.h"
#include "test/support/runtime_test_support.h"

using namespace lull::manager;
using namespace lull::core;

namespace {

class RecordingBackend final : public Backend {
 public:
  void start_batch(const BatchRequest& b) override { started.push_back(b); }
  void complete(std::size_t index) {
    BatchResult r;
    r.worker = started[index].worker;
    r.model = started[index].model;
    r.queries = started[index].queries;
    report(r);
  }
  std::vector<BatchRequest> started;
};

}  // namespace

TEST_CASE("drain tracker: a drained worker finishes its batch, hands its queue over, then stops", "[manager][drain]") {
  const PolicyTable table = lull::test::tiny_table();  // 2 workers
  VirtualClock clock;
  RecordingBackend backend;
  Dispatcher d(table, clock, backend);
  std::map<QueryId, int> answered;
  d.on_batch_done([&](const BatchResult& r, std::int64_t) {
    for (auto q : r.queries) ++answered[q];
  });
  SimulatedWorkerPool pool(clock, ProvisioningDelay::fixed(0), 2);
  const std::map<std::string, int> index = {{"sim-0", 0}, {"sim-1", 1}};
  DrainTracker tracker;
  pool.set_drain_hook([&](const std::string& id, std::function<void()> drained) {
    const int w = index.at(id);
    d.set_worker_available(w, false);
    tracker.begin(w, d.busy(w), std::move(drained));
  });
  const auto complete = [&](std::size_t i) {
    const int w = backend.started[i].worker;
    backend.complete(i);
    if (!d.busy(w)) tracker.on_idle(w);
  };

  for (QueryId id = 0; id < 5; ++id) {
    clock.advance_to_us(static_cast<std::int64_t>(id) * 1000);
    d.on_arrival(id);
  }
  REQUIRE(backend.started.size() == 2);  // 0 on worker 0, 1 on worker 1
  REQUIRE(d.queued(0) == 2);

  pool.stop_worker("sim-0");
  CHECK(tracker.draining(0));
  CHECK(pool.list_workers()[0].state == WorkerState::kDraining);
  CHECK(d.queued(0) == 0);  // its queue moved to worker 1
  CHECK(d.queued(1) == 3);
  for (QueryId id = 5; id < 8; ++id) d.on_arrival(id);  // new queries: none to worker 0
  CHECK(d.queued(0) == 0);

  clock.advance_to_us(20'000);
  complete(0);  // its batch in flight finishes: now it is drained
  CHECK_FALSE(tracker.draining(0));
  CHECK(pool.list_workers()[0].state == WorkerState::kStopped);
  CHECK(pool.list_workers()[0].since_us == 20'000);

  // Serve everything left; every batch from now on is worker 1's.
  for (std::size_t i = 1; i < backend.started.size(); ++i) {
    clock.advance_to_us(clock.now_us() + 50'000);
    if (i >= 2) CHECK(backend.started[i].worker == 1);
    complete(i);
  }
  REQUIRE(answered.size() == 8);
  for (const auto& [q, times] : answered) CHECK(times == 1);
}

TEST_CASE("drain tracker: an idle worker is drained at once, on_idle without a drain does nothing",
          "[manager][drain]") {
  DrainTracker tracker;
  int calls = 0;
  tracker.begin(3, false, [&] { ++calls; });
  CHECK(calls == 1);
  CHECK_FALSE(tracker.draining(3));
  tracker.on_idle(3);
  CHECK(calls == 1);
  tracker.begin(4, true, [&] { ++calls; });
  CHECK(tracker.draining(4));
  tracker.on_idle(4);
  tracker.on_idle(4);
  CHECK(calls == 2);
}
