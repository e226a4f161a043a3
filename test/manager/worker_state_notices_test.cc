// Worker state changes reach the handler in the order a pool made them, also
// when a later change (a supervisor thread's "up") is delivered before the
// thread that made an earlier one ("starting") gets to deliver its own.
#include "runtime/manager/worker_state_notices.h"

#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

using lull::manager::WorkerInfo;
using lull::manager::WorkerState;

namespace {

WorkerInfo change(WorkerState s, std::int64_t seq) {
  WorkerInfo w;
  w.id = "w";
  w.state = s;
  w.since_us = seq;
  return w;
}

}  // namespace

TEST_CASE("worker state notices: a change delivered by a later thread does not overtake an earlier one", "[manager]") {
  lull::manager::WorkerStateNotices notices;
  std::vector<WorkerState> seen;
  notices.set_handler([&](const WorkerInfo& w) { seen.push_back(w.state); });
  std::vector<WorkerInfo> starting{change(WorkerState::kStarting, 1)};
  notices.queue(starting);  // the caller made it, then lost its core before delivering
  CHECK(starting.empty());
  std::vector<WorkerInfo> up{change(WorkerState::kUp, 2)};
  notices.queue(up);
  notices.deliver();  // the supervisor delivers first: both, oldest first
  notices.deliver();  // the caller's delivery finds nothing left
  CHECK(seen == std::vector<WorkerState>{WorkerState::kStarting, WorkerState::kUp});
}

TEST_CASE("worker state notices: changes made under a pool's lock on two threads arrive in the order made",
          "[manager][threaded]") {
  lull::manager::WorkerStateNotices notices;
  std::vector<std::int64_t> seen;
  notices.set_handler([&](const WorkerInfo& w) { seen.push_back(w.since_us); });  // one delivery at a time
  std::mutex pool_mu;
  std::int64_t next = 0;
  const auto work = [&] {
    for (int i = 0; i < 2000; ++i) {
      {
        std::lock_guard<std::mutex> lock(pool_mu);
        std::vector<WorkerInfo> changed{change(WorkerState::kUp, next++)};
        notices.queue(changed);
      }
      notices.deliver();
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  REQUIRE(seen.size() == 4000);
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == static_cast<std::int64_t>(i));
}
