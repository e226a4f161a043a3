// ServingAutoscaler's slot logic in process, without model servers: the
// simulated pool (virtual time) and a recording WorkerSlots that holds each
// drain until the test finishes it (after ninja's FakeCommandRunner). The
// end-to-end versions with stand-in servers are serving_autoscaler_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "test/support/autoscale_test_support.h"
#include "runtime/core/clock.h"
#include "runtime/manager/provisioning_delay.h"
#include "runtime/pools/serving_autoscaler.h"
#include "runtime/manager/simulated_worker_pool.h"
#include "runtime/core/worker_slots.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::core::VirtualClock;

namespace {

// Records what the autoscaler asks of the slots, one line each; drains wait
// for finish_drains().
class RecordingSlots final : public lull::core::WorkerSlots {
 public:
  explicit RecordingSlots(int slots) : slots_(slots), healthy_(static_cast<std::size_t>(slots), 1) {}
  int slot_count() const override { return slots_; }
  void join(int slot, const std::string&, const std::string&) override {
    calls.push_back("join " + std::to_string(slot));
  }
  void drain(int slot, std::function<void()> drained) override {
    calls.push_back("drain " + std::to_string(slot));
    pending_.push_back(std::move(drained));
  }
  void leave(int slot, const std::string&) override { calls.push_back("leave " + std::to_string(slot)); }
  bool healthy(int slot) const override { return healthy_.at(static_cast<std::size_t>(slot)) != 0; }

  void finish_drains() {
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& d : pending) d();
  }
  void set_healthy(int slot, bool h) { healthy_.at(static_cast<std::size_t>(slot)) = h ? 1 : 0; }
  std::vector<std::string> calls;

 private:
  int slots_;
  std::vector<char> healthy_;
  std::vector<std::function<void()>> pending_;
};

ServingAutoscalerOptions options(std::vector<std::string>* log) {
  return lull::test::quick_autoscaler_options([log](const std::string& line) { log->push_back(line); });
}

struct Rig {
  VirtualClock clock;
  std::vector<std::string> log;
  SimulatedWorkerPool pool{clock, ProvisioningDelay::fixed(2'000'000)};
  ServingAutoscaler scaler{lull::test::autoscale_library(), options(&log), pool, clock};
  RecordingSlots slots{scaler.slots()};
  Rig() { scaler.attach(slots); }
  ~Rig() { scaler.stop(); }
  // Moves to t_s: arrivals at `qps` over the second before, then workers due come up.
  void at(double t_s, int qps = 0) {
    const auto t_us = static_cast<std::int64_t>(t_s * 1e6);
    for (int i = 0; i < qps; ++i) scaler.record_arrival(t_us - 1'000'000 + i * (1'000'000 / qps));
    clock.advance_to_us(t_us);
    pool.poll();
  }
};

}  // namespace

TEST_CASE("serving autoscaler (in process): workers join the lowest free slots and leave after their drain",
          "[manager][serving]") {
  Rig rig;
  CHECK(rig.scaler.slots() == 20);  // twice the largest worker count, 10
  rig.at(1);
  auto d = rig.scaler.decide(rig.clock.now_us());
  CHECK(d.action == ScaleDecision::Action::kScaleOut);
  CHECK(d.count == 2);             // the floor, the smallest worker count
  CHECK(rig.slots.calls.empty());  // starting: no slot yet
  rig.at(3);
  CHECK(rig.slots.calls == std::vector<std::string>{"join 0", "join 1"});
  CHECK(rig.scaler.slot_of("sim-0") == 0);
  CHECK(rig.scaler.slot_of("sim-1") == 1);

  // 350 QPS needs 4 workers at 100 QPS each (window_max, envelope 1.25 x).
  for (int t = 4; t <= 5; ++t) {
    rig.at(t, 350);
    d = rig.scaler.decide(rig.clock.now_us());
  }
  rig.at(8);
  CHECK(rig.slots.calls == std::vector<std::string>{"join 0", "join 1", "join 2", "join 3"});

  // No load: after the hold-off, scale in; the drained worker leaves its slot only once its drain is done.
  rig.slots.calls.clear();
  int drains = 0;
  for (int t = 9; t <= 20 && drains == 0; ++t) {
    rig.at(t);
    d = rig.scaler.decide(rig.clock.now_us());
    if (d.action == ScaleDecision::Action::kScaleIn) drains = d.count;
  }
  REQUIRE(drains >= 1);
  REQUIRE(rig.slots.calls.size() == static_cast<std::size_t>(drains));
  int lowest_freed = 1 << 30;
  for (const auto& call : rig.slots.calls) {
    REQUIRE(call.rfind("drain ", 0) == 0);
    lowest_freed = std::min(lowest_freed, std::stoi(call.substr(6)));
  }
  std::vector<std::string> left;
  for (const auto& call : rig.slots.calls) left.push_back("leave " + call.substr(6));
  rig.slots.finish_drains();
  CHECK(std::vector<std::string>(rig.slots.calls.begin() + drains, rig.slots.calls.end()) == left);

  // The lowest freed slot is the lowest free one again for the next worker.
  rig.slots.calls.clear();
  for (int t = 30; t <= 31; ++t) {
    rig.at(t, 350);
    rig.scaler.decide(rig.clock.now_us());
  }
  rig.at(34);
  REQUIRE_FALSE(rig.slots.calls.empty());
  CHECK(rig.slots.calls.front() == "join " + std::to_string(lowest_freed));
}

TEST_CASE("serving autoscaler (in process): a worker failing to start holds scaling with a doubling backoff",
          "[manager][serving][fault]") {
  Rig rig;
  rig.at(1);
  rig.scaler.decide(rig.clock.now_us());  // floor: sim-0, sim-1 starting
  rig.pool.fail_worker("sim-0", "exit status 1");
  REQUIRE_FALSE(rig.log.empty());
  CHECK_THAT(rig.log.back(), Catch::Contains("worker sim-0 failed (start): exit status 1") &&
                                 Catch::Contains("scaling on hold for 1.0 s (1 failed starts in a row)"));
  rig.at(1.5);
  CHECK(rig.scaler.decide(rig.clock.now_us()).action == ScaleDecision::Action::kNone);  // on hold
  rig.at(2);
  const auto d = rig.scaler.decide(rig.clock.now_us());  // hold over: the floor again
  CHECK(d.action == ScaleDecision::Action::kScaleOut);
  const std::string replacement = rig.pool.list_workers().back().id;
  rig.pool.fail_worker(replacement, "exit status 1");
  CHECK_THAT(rig.log.back(), Catch::Contains("scaling on hold for 2.0 s (2 failed starts in a row)"));
  CHECK_THAT(rig.scaler.metrics_text(), Catch::Contains("lull_autoscale_worker_failures_total{phase=\"start\"} 2"));
}

TEST_CASE("serving autoscaler (in process): a worker whose slot is unhealthy is out of rotation, not up",
          "[manager][serving]") {
  Rig rig;
  rig.at(1);
  rig.scaler.decide(rig.clock.now_us());
  rig.at(3);
  REQUIRE(rig.slots.calls == std::vector<std::string>{"join 0", "join 1"});
  rig.slots.set_healthy(1, false);
  const std::string metrics = rig.scaler.metrics_text();
  CHECK_THAT(metrics, Catch::Contains("lull_autoscale_workers{state=\"up\"} 1"));
  CHECK_THAT(metrics, Catch::Contains("lull_autoscale_workers{state=\"out_of_rotation\"} 1"));
}

TEST_CASE("serving autoscaler (in process): capacity follows the arrival pattern being served",
          "[manager][autoscale][arrivals]") {
  VirtualClock clock;
  std::vector<std::string> log;
  SimulatedWorkerPool pool{clock, ProvisioningDelay::fixed(2'000'000)};
  lull::ArrivalProcess served = lull::ArrivalProcess::poisson();
  auto o = options(&log);
  o.pattern = [&served] { return served; };
  ServingAutoscaler scaler{lull::test::pattern_library(), o, pool, clock};
  RecordingSlots slots{scaler.slots()};
  scaler.attach(slots);
  scaler.decide(1'000'000);
  CHECK(scaler.autoscaler().capacity().pattern() == lull::ArrivalProcess::poisson());
  CHECK(scaler.autoscaler().capacity().fewest_workers_for(400) == 4);
  served = lull::ArrivalProcess::gamma(4);  // the session's estimate moved
  scaler.decide(2'000'000);
  CHECK(scaler.autoscaler().capacity().pattern() == lull::ArrivalProcess::gamma(4));
  CHECK(scaler.autoscaler().capacity().fewest_workers_for(400) == 8);
  CHECK(std::count(log.begin(), log.end(), "capacity now read for arrivals gamma:4") == 1);
  scaler.decide(3'000'000);  // unchanged: no new table, no new line
  CHECK(std::count(log.begin(), log.end(), "capacity now read for arrivals gamma:4") == 1);
  scaler.stop();
}

TEST_CASE("serving autoscaler (in process): a variant switch keeps the arrival pattern capacity is read for",
          "[manager][autoscale][arrivals]") {
  VirtualClock clock;
  std::vector<std::string> log;
  SimulatedWorkerPool pool{clock, ProvisioningDelay::fixed(2'000'000)};
  lull::ArrivalProcess served = lull::ArrivalProcess::gamma(4);
  auto o = options(&log);
  o.pattern = [&served] { return served; };
  ServingAutoscaler scaler{lull::test::pattern_library(), o, pool, clock};
  RecordingSlots slots{scaler.slots()};
  scaler.attach(slots);
  scaler.decide(1'000'000);
  REQUIRE(scaler.autoscaler().capacity().pattern() == lull::ArrivalProcess::gamma(4));
  // The variant's library (the same sets here): read for gamma:4 at once,
  // not for Poisson and then gamma:4 again at the next decision.
  scaler.use_library(lull::test::pattern_library());
  scaler.decide(2'000'000);
  CHECK(scaler.autoscaler().capacity().pattern() == lull::ArrivalProcess::gamma(4));
  CHECK(scaler.autoscaler().capacity().fewest_workers_for(400) == 8);
  CHECK(std::count(log.begin(), log.end(), "capacity now read for arrivals gamma:4") == 1);
  scaler.stop();
}
