// The front end's lane for large bodies (runtime/frontend/decode_lane.h):
// clients take turns, one body at a time, and a stop answers what waits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/frontend/decode_lane.h"

using lull::frontend::DecodeLane;

namespace {

// What the tasks did, in order: "name" when run, "name:stopped" when not.
struct Log {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> entries;
  bool gate_open = false;

  DecodeLane::Task task(const std::string& name) {
    return [this, name](bool run) {
      std::lock_guard<std::mutex> lock(mu);
      entries.push_back(run ? name : name + ":stopped");
      changed.notify_all();
    };
  }
  // A task that holds the lane until open_gate().
  DecodeLane::Task blocker() {
    return [this](bool run) {
      std::unique_lock<std::mutex> lock(mu);
      entries.push_back(run ? "blocker" : "blocker:stopped");
      changed.notify_all();
      changed.wait_for(lock, std::chrono::seconds(30), [this] { return gate_open; });
    };
  }
  void open_gate() {
    std::lock_guard<std::mutex> lock(mu);
    gate_open = true;
    changed.notify_all();
  }
  // Bounded wait for `n` entries; the entries then.
  std::vector<std::string> wait_for(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait_for(lock, std::chrono::seconds(30), [&] { return entries.size() >= n; });
    return entries;
  }
};

}  // namespace

TEST_CASE("decode lane: clients take turns, a client's own bodies in order", "[frontend][lane]") {
  Log log;
  DecodeLane lane;
  lane.post("z", log.blocker());
  REQUIRE(log.wait_for(1) == std::vector<std::string>{"blocker"});
  // While the lane is busy: three bodies from a, then one each from b and c.
  lane.post("a", log.task("a1"));
  lane.post("a", log.task("a2"));
  lane.post("a", log.task("a3"));
  lane.post("b", log.task("b1"));
  lane.post("c", log.task("c1"));
  log.open_gate();
  CHECK(log.wait_for(6) == std::vector<std::string>{"blocker", "a1", "b1", "c1", "a2", "a3"});
}

TEST_CASE("decode lane: a stop answers every waiting body without decoding it", "[frontend][lane]") {
  Log log;
  DecodeLane lane;
  lane.post("z", log.blocker());
  REQUIRE(log.wait_for(1).size() == 1);
  lane.post("a", log.task("a1"));
  lane.post("b", log.task("b1"));
  log.open_gate();  // the blocker ends; a1 or b1 may run before the stop takes the rest
  lane.stop();
  const auto after_stop = log.wait_for(3);
  REQUIRE(after_stop.size() == 3);
  for (const char* name : {"a1", "b1"})
    CHECK((std::count(after_stop.begin(), after_stop.end(), std::string(name)) +
           std::count(after_stop.begin(), after_stop.end(), std::string(name) + ":stopped")) == 1);
  lane.post("a", log.task("late"));  // after the stop: answered at once, on this thread
  CHECK(log.wait_for(4).back() == "late:stopped");
  lane.stop();  // idempotent
}
