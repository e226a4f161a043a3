// ControlLoop: the one loop that ticks the serving side's controllers, in
// virtual time (the simulator) and in real time (lull serve).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/control_loop.h"

using lull::core::Controller;
using lull::core::ControlLoop;

namespace {
// Ticks every `period_us` from `first_us`, recording each tick as "NAME@T".
class Periodic final : public Controller {
 public:
  Periodic(std::string name, std::int64_t first_us, std::int64_t period_us, std::vector<std::string>* ticks,
           std::mutex* mu)
      : name_(std::move(name)), next_(first_us), period_(period_us), ticks_(ticks), mu_(mu) {}
  std::string controller_name() const override { return name_; }
  std::int64_t next_tick_us() const override { return next_.load(); }
  void tick(std::int64_t now_us) override {
    {
      std::lock_guard<std::mutex> lock(*mu_);
      ticks_->push_back(name_ + "@" + std::to_string(now_us));
    }
    ++count;
    next_ = now_us + period_;
    if (throw_on_tick) throw std::runtime_error("tick failed on purpose");
  }
  std::atomic<int> count{0};
  std::atomic<bool> throw_on_tick{false};

 private:
  std::string name_;
  std::atomic<std::int64_t> next_;
  std::int64_t period_;
  std::vector<std::string>* ticks_;
  std::mutex* mu_;
};

// Ticks only when an event has been posted (next tick: never, until then).
// Counts how often the loop looked at it, so a test knows the loop has seen
// it without waiting on the wall clock.
class OnEvent final : public Controller {
 public:
  std::string controller_name() const override { return "on-event"; }
  std::int64_t next_tick_us() const override {
    ++looks;
    return pending_ ? 0 : kNever;
  }
  void tick(std::int64_t) override {
    pending_ = false;
    ++count;
  }
  void post() {
    pending_ = true;
    wake_loop();
  }
  std::atomic<int> count{0};
  mutable std::atomic<int> looks{0};

 private:
  std::atomic<bool> pending_{false};
};

// Always due; its tick blocks until released, so a test can hold the loop
// inside a tick.
class Blocking final : public Controller {
 public:
  std::string controller_name() const override { return "blocking"; }
  std::int64_t next_tick_us() const override { return 0; }
  void tick(std::int64_t) override {
    ++count;
    entered.set_value();
    release.get_future().wait();
  }
  std::atomic<int> count{0};
  std::promise<void> entered, release;
};

template <typename Pred>
bool eventually(Pred pred, int ms = 10000) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}
}  // namespace

TEST_CASE("ControlLoop in virtual time: due controllers tick in the order added, the clock advanced to each") {
  lull::core::VirtualClock clock;
  std::mutex mu;
  std::vector<std::string> ticks;
  Periodic a("a", 100, 100, &ticks, &mu), b("b", 50, 150, &ticks, &mu);
  ControlLoop loop(clock);
  loop.add(a);
  loop.add(b);
  // Until 40 nothing is due.
  CHECK_FALSE(loop.run_next_due(40));
  CHECK(clock.now_us() == 0);
  // By 120 both are: a, added first, ticks first even though b is due earlier.
  REQUIRE(loop.run_next_due(120));
  CHECK(clock.now_us() == 100);
  REQUIRE(loop.run_next_due(120));
  CHECK(clock.now_us() == 100);  // b was due at 50: the clock never goes back
  CHECK_FALSE(loop.run_next_due(120));
  // The simulator's event loop: each event's time in turn is the horizon.
  for (std::int64_t t = 150; t <= 500; t += 50)
    while (loop.run_next_due(t)) {
    }
  CHECK(ticks == std::vector<std::string>{"a@100", "b@100", "a@200", "b@250", "a@300", "a@400", "b@400", "a@500"});
}

TEST_CASE("ControlLoop in virtual time: a tick that throws ends the run") {
  lull::core::VirtualClock clock;
  std::mutex mu;
  std::vector<std::string> ticks;
  Periodic a("a", 10, 10, &ticks, &mu);
  a.throw_on_tick = true;
  ControlLoop loop(clock);
  loop.add(a);
  CHECK_THROWS_WITH(loop.run_next_due(10), "tick failed on purpose");
  CHECK_THROWS_AS(loop.start(), std::logic_error);
}

TEST_CASE("ControlLoop in real time: each controller ticks on its own schedule, and stop ends every thread") {
  lull::core::WallClock clock;
  std::mutex mu;
  std::vector<std::string> ticks;
  const std::int64_t t0 = clock.now_us();
  Periodic fast("fast", t0, 2'000, &ticks, &mu), slow("slow", t0 + 3'600'000'000LL, 1'000, &ticks, &mu);
  ControlLoop loop(clock);
  loop.add(fast);
  loop.add(slow);
  loop.start();
  CHECK(eventually([&] { return fast.count >= 5; }));
  CHECK(slow.count == 0);  // an hour away
  loop.stop();
  CHECK(loop.stopped());
  CHECK_THROWS_AS(loop.add(fast), std::logic_error);
}

TEST_CASE("ControlLoop in real time: stop waits for the tick in progress, and no tick starts after it") {
  lull::core::WallClock clock;
  Blocking c;
  ControlLoop loop(clock);
  loop.add(c);
  loop.start();
  c.entered.get_future().wait();  // the loop's thread is inside its first tick
  auto stopped = std::async(std::launch::async, [&] { loop.stop(); });
  REQUIRE(eventually([&] { return loop.stopped(); }));  // stop() has begun
  // It joins the thread, which is held in the tick: it cannot return yet.
  CHECK(stopped.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
  c.release.set_value();
  REQUIRE(stopped.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  // The controller is always due: a thread still running would have ticked
  // it again (and thrown, setting `entered` twice).
  CHECK(c.count == 1);
  CHECK(loop.stopped());
}

TEST_CASE("ControlLoop in real time: a controller that throws is logged and ticks again later while the others go on") {
  lull::core::WallClock clock;
  std::mutex mu;
  std::vector<std::string> ticks, log;
  Periodic bad("bad", 0, 1'000, &ticks, &mu), good("good", 0, 1'000, &ticks, &mu);
  bad.throw_on_tick = true;
  ControlLoop loop(clock, [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(line);
  });
  loop.add(bad);
  loop.add(good);
  loop.start(/*retry_us=*/50'000);
  CHECK(eventually([&] { return bad.count >= 2 && good.count >= 10; }));
  loop.stop();
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(!log.empty());
  CHECK(log.front() == "bad: tick failed on purpose");
  // Its own 1 ms period would have ticked it every millisecond: the retry
  // delay holds it back, while the good one kept its pace.
  CHECK(bad.count < good.count);
}

TEST_CASE("ControlLoop in real time: a controller woken by an event ticks at once") {
  lull::core::WallClock clock;
  OnEvent c;
  ControlLoop loop(clock);
  loop.add(c);
  loop.start();
  // Once the loop has looked at it, it found nothing due and waits: no tick.
  REQUIRE(eventually([&] { return c.looks >= 1; }));
  CHECK(c.count == 0);
  c.post();
  CHECK(eventually([&] { return c.count == 1; }));
  c.post();
  CHECK(eventually([&] { return c.count == 2; }));
  loop.stop();
  const int looks = c.looks;
  c.post();  // a stopped loop is not woken: its threads are gone, nothing looks again
  CHECK(c.looks == looks);
  CHECK(c.count == 2);
}

TEST_CASE("ControlLoop: a controller destroyed before its loop is forgotten: stop() and ticks never reach it") {
  // Before: stop() (also the loop's destructor) locked each controller's own
  // mutex, freed with it: a heap use after free under ASan.
  std::mutex mu;
  std::vector<std::string> ticks;
  {
    lull::core::WallClock clock;
    ControlLoop loop(clock);
    auto gone = std::make_unique<Periodic>("gone", 0, 100, &ticks, &mu);
    loop.add(*gone);
    gone.reset();
    loop.stop();
    CHECK(loop.stopped());
  }
  lull::core::VirtualClock clock;
  ControlLoop loop(clock);
  Periodic kept("kept", 10, 10, &ticks, &mu);
  auto gone = std::make_unique<Periodic>("gone", 5, 10, &ticks, &mu);
  loop.add(*gone);
  loop.add(kept);
  gone.reset();
  REQUIRE(loop.run_next_due(10));
  CHECK_FALSE(loop.run_next_due(10));
  CHECK(ticks == std::vector<std::string>{"kept@10"});
}  // the loop's destructor stops it: nothing of "gone" is read
