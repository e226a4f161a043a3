// The simulated worker pool over a virtual clock: workers come up exactly
// one provisioning delay after they are asked for, in time order; removal
// waits for the drain hook; state changes reach the handler in order.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/manager/simulated_worker_pool.h"

using namespace lull::manager;
using lull::core::VirtualClock;

namespace {
std::map<std::string, WorkerState> states(SimulatedWorkerPool& pool) {
  std::map<std::string, WorkerState> out;
  for (const auto& w : pool.list_workers()) out[w.id] = w.state;
  return out;
}
}  // namespace

TEST_CASE("simulated workers are up one provisioning delay after start", "[manager][sim]") {
  VirtualClock clock;
  SimulatedWorkerPool pool(clock, ProvisioningDelay::fixed(5000000), 2);
  std::vector<std::string> log;
  pool.set_state_handler([&](const WorkerInfo& w) {
    log.push_back(w.id + " " + worker_state_name(w.state) + " " + std::to_string(w.since_us));
  });
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 2);
  clock.advance_to_us(1000000);
  const auto ids = pool.start_workers(2);
  CHECK(ids == std::vector<std::string>{"sim-2", "sim-3"});
  CHECK(pool.next_change_us() == 6000000);
  clock.advance_to_us(5999999);
  CHECK(count_workers(pool.list_workers(), WorkerState::kStarting) == 2);
  clock.advance_to_us(6000000);
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 4);
  CHECK(pool.next_change_us() == -1);
  CHECK(log == std::vector<std::string>{"sim-2 starting 1000000", "sim-3 starting 1000000", "sim-2 up 6000000",
                                        "sim-3 up 6000000"});
}

TEST_CASE("simulated workers with drawn delays come up in time order, same seed same times", "[manager][sim]") {
  const auto run = [](std::uint64_t seed) {
    VirtualClock clock;
    SimulatedWorkerPool pool(clock, ProvisioningDelay::uniform(1000000, 30000000, seed));
    std::vector<std::int64_t> up_times;
    pool.set_state_handler([&](const WorkerInfo& w) {
      if (w.state == WorkerState::kUp) up_times.push_back(w.since_us);
    });
    pool.start_workers(8);
    clock.advance_to_us(40000000);  // one poll sees every one of them come up
    pool.poll();
    return up_times;
  };
  const auto a = run(3);
  REQUIRE(a.size() == 8);
  for (std::size_t i = 1; i < a.size(); ++i) CHECK(a[i - 1] <= a[i]);
  CHECK(a.front() >= 1000000);
  CHECK(a.back() <= 30000000);
  CHECK(a == run(3));
  CHECK(a != run(4));
}

TEST_CASE("a simulated worker stops only once the serving layer says it is drained", "[manager][sim]") {
  VirtualClock clock;
  SimulatedWorkerPool pool(clock, ProvisioningDelay::fixed(0), 3);
  std::function<void()> pending;
  std::string drained_id;
  pool.set_drain_hook([&](const std::string& id, std::function<void()> drained) {
    drained_id = id;
    pending = std::move(drained);
  });
  clock.advance_to_us(100);
  pool.stop_worker("sim-1");
  CHECK(drained_id == "sim-1");
  CHECK(states(pool)["sim-1"] == WorkerState::kDraining);
  pool.stop_worker("sim-1");  // again while draining: nothing new
  clock.advance_to_us(700);
  pending();
  const auto workers = pool.list_workers();
  CHECK(workers[1].state == WorkerState::kStopped);
  CHECK(workers[1].since_us == 700);
  CHECK(count_workers(workers, WorkerState::kUp) == 2);
  CHECK_THROWS_WITH(pool.stop_worker("sim-9"), Catch::Contains("no worker 'sim-9'"));
}

TEST_CASE("a starting simulated worker stops at once, a failed one keeps its reason", "[manager][sim]") {
  VirtualClock clock;
  SimulatedWorkerPool pool(clock, ProvisioningDelay::fixed(1000), 1);
  int drains = 0;
  pool.set_drain_hook([&](const std::string&, std::function<void()> drained) {
    ++drains;
    drained();  // nothing in flight: drained at once
  });
  const auto ids = pool.start_workers(1);
  pool.stop_worker(ids[0]);
  CHECK(drains == 0);  // it never served
  CHECK(states(pool)[ids[0]] == WorkerState::kStopped);
  clock.advance_to_us(5000);
  CHECK(states(pool)[ids[0]] == WorkerState::kStopped);  // does not come up later

  pool.fail_worker("sim-0", "crashed");
  const auto w = pool.list_workers()[0];
  CHECK(w.state == WorkerState::kFailed);
  CHECK(w.failure == "crashed");
  pool.stop_worker("sim-0");  // nothing to do for a failed worker
  CHECK(drains == 0);
  CHECK(pool.list_workers()[0].state == WorkerState::kFailed);
}
