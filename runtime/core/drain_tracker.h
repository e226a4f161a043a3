#pragma once
// The serving layer's side of the drain hook (worker_pool.h), for a server
// built on the Dispatcher: when a pool asks to drain worker w, the server
// marks w unavailable in the Dispatcher (round-robin skips it and its queued
// queries and waiting retries move to the others, deadlines kept: see
// Dispatcher::set_worker_available) and hands the pool's `drained` callback
// here with whether w has a batch in flight; after every completion on w it
// calls on_idle(w) once w is no longer busy. The callback runs exactly once,
// when w has nothing in flight. Single-threaded like the Dispatcher: call it
// under the same lock. Worker indices are the Dispatcher's.
#include <functional>
#include <map>

namespace lull::core {

class DrainTracker {
 public:
  // w is now out of rotation; `drained` runs at once when it is idle, else at on_idle(w).
  void begin(int worker, bool busy, std::function<void()> drained);
  // w has no batch in flight any more: runs its pending `drained`, if any.
  void on_idle(int worker);
  bool draining(int worker) const { return pending_.count(worker) != 0; }

 private:
  std::map<int, std::function<void()>> pending_;
};

}  // namespace lull::core
