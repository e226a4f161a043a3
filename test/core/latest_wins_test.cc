// LatestWins: the one "latest request wins" background worker of online
// compilation and drift recompilation.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "runtime/core/latest_wins.h"

using lull::core::LatestWins;

namespace {
// Work that records its items and holds the first until released.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, open = false;
  std::vector<int> done;
  void work(int item) {
    std::unique_lock<std::mutex> lock(mu);
    started = true;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
    done.push_back(item);
  }
  void wait_started() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return started; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};
}  // namespace

TEST_CASE("LatestWins: items posted while busy wait, and the newest replaces the waiting one") {
  Gate gate;
  LatestWins<int> worker([&](const int& i) { gate.work(i); });
  worker.post(1);
  gate.wait_started();  // 1 runs
  worker.post(2);
  worker.post(3);  // replaces 2
  gate.release();
  CHECK(worker.wait_idle() == 2);
  CHECK(gate.done == std::vector<int>{1, 3});
}

TEST_CASE("LatestWins: an item the same as the one running is not queued again") {
  Gate gate;
  LatestWins<int> worker([&](const int& i) { gate.work(i); });
  const auto same = [](int item) { return [item](const int& running) { return running == item; }; };
  worker.post(7, same(7));
  gate.wait_started();
  worker.post(7, same(7));  // running already: dropped
  worker.post(8, same(8));
  worker.post(9, same(9));
  worker.drop_waiting();  // and 9 is dropped too
  gate.release();
  CHECK(worker.wait_idle() == 1);
  CHECK(gate.done == std::vector<int>{7});
}

TEST_CASE("LatestSlot: the rule without a thread (a ControlLoop controller takes on its tick)") {
  lull::core::LatestSlot<int> slot;
  CHECK_FALSE(slot.take());  // nothing waits: at once
  slot.post(1);
  slot.post(2);  // replaces 1
  CHECK(slot.has_waiting());
  const auto running = slot.take();
  REQUIRE(running);
  CHECK(*running == 2);
  CHECK_FALSE(slot.has_waiting());
  CHECK_FALSE(slot.post(2, [](const int& r) { return r == 2; }));  // the same runs already
  CHECK(slot.post(3, [](const int& r) { return r == 3; }));
  slot.post(4);  // replaces 3
  slot.finish();
  CHECK(*slot.take() == 4);
  slot.finish();
  CHECK(slot.wait_idle() == 2);
  slot.post(5);
  slot.close();  // drops 5; a waiter returns
  CHECK_FALSE(slot.wait_take());
  CHECK(slot.wait_idle() == 2);
}
