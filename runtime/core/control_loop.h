#pragma once
// The one control loop of the serving side. Every periodic or background
// decision (the autoscaler's, the model-variant switch, the drift
// recompilation) is a Controller: it says when it wants its next tick, and
// decides in tick(). One ControlLoop runs them on a Clock, the same way in
// both worlds:
// - real time (lull serve): start() gives each controller a thread of its
//   own that sleeps until its next tick, so a slow tick (a model load, a
//   Kubernetes call, a compilation) never delays another controller's; a
//   tick that throws is logged and the controller ticks again later;
// - virtual time (lull simulate): the simulator's event loop asks for the
//   next controller due and the loop advances the virtual clock and ticks it
//   there, on the simulator's thread; a tick that throws ends the run.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/clock.h"

namespace lull::core {

class ControlLoop;
class Controller;

// A controller's membership of its loop, shared by both: each clears its
// side as it goes (the loop at stop(), the controller when destroyed), so
// neither ever reaches the other once it is gone.
struct ControllerLink {
  std::mutex mu;                     // held while waking, so a stopped loop is never woken
  ControlLoop* loop = nullptr;       // set by ControlLoop::add, cleared by its stop()
  Controller* controller = nullptr;  // cleared by the controller's destructor
};

class Controller {
 public:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;
  // Leaves its loop: a loop stopped (or never started) may outlive it. It
  // must not be destroyed while a started loop still runs it.
  virtual ~Controller();
  // Names it in the loop's log lines.
  virtual std::string controller_name() const = 0;
  // When it wants its next tick, on the loop's clock (kNever: not until
  // woken). Read by the loop between ticks.
  virtual std::int64_t next_tick_us() const = 0;
  // One decision at `now_us` of the loop's clock.
  virtual void tick(std::int64_t now_us) = 0;

 protected:
  // Any thread: next_tick_us() moved earlier (an event arrived); the loop
  // looks again at once instead of sleeping until the time it last read.
  void wake_loop() const;

 private:
  friend class ControlLoop;
  const std::shared_ptr<ControllerLink> link_;
};

class ControlLoop {
 public:
  using Log = std::function<void(const std::string&)>;
  // Real time: start() and stop(). `log` gets a line per tick that threw.
  explicit ControlLoop(const Clock& clock, Log log = nullptr);
  // Virtual time: run_next_due() advances `clock`.
  explicit ControlLoop(VirtualClock& clock);
  ~ControlLoop();  // stop()
  ControlLoop(const ControlLoop&) = delete;
  ControlLoop& operator=(const ControlLoop&) = delete;

  // Before start(); at equal times the controller added first ticks first.
  // `c` must outlive the loop's threads (stop()); it may be destroyed before
  // the loop itself, which then forgets it.
  void add(Controller& c);
  std::size_t size() const { return entries_.size(); }

  // Real time: one thread per controller; each ticks when its next tick is
  // due. A tick that throws std::exception is logged ("NAME: what"), and
  // that controller's next tick comes no sooner than `retry_us` later.
  void start(std::int64_t retry_us = 1'000'000);
  // Ends every thread, each after the tick it is in (if any); no tick
  // starts afterwards. Idempotent; any thread but a controller's.
  void stop();
  bool stopped() const;

  // Virtual time: the first controller, in the order added, whose next tick
  // is at or before `until_us` ticks, the clock advanced to that time
  // (never back); true if one did. Exceptions propagate.
  bool run_next_due(std::int64_t until_us);

 private:
  struct Entry {
    std::shared_ptr<ControllerLink> link;
    std::int64_t not_before_us = std::numeric_limits<std::int64_t>::min();  // after a tick that threw
  };
  friend class Controller;
  void wake();
  void run(Entry& e);
  static Controller* controller_of(const Entry& e);  // nullptr: destroyed

  const Clock& clock_;
  VirtualClock* virtual_ = nullptr;
  Log log_;
  std::int64_t retry_us_ = 1'000'000;
  std::vector<std::unique_ptr<Entry>> entries_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t wakes_ = 0;
  bool started_ = false, stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace lull::core
