#pragma once
// Worker state changes reach a pool's handler in the order the pool made
// them. A pool queues each change under its own lock (queue) and delivers
// after releasing it (deliver); one delivery runs at a time and takes every
// queued change, so a change made later on another thread (a supervisor
// seeing a worker up) never overtakes an earlier one (the caller's
// "starting") on its way to the handler.
#include <mutex>
#include <vector>

#include "runtime/manager/worker_pool.h"

namespace lull::manager {

class WorkerStateNotices {
 public:
  void set_handler(WorkerStateHandler handler);
  // Appends `changed` and clears it; called under the pool's lock, where
  // the changes were made.
  void queue(std::vector<WorkerInfo>& changed);
  // Hands every queued change to the handler, oldest first; called without
  // the pool's lock (the handler may read the pool).
  void deliver();

 private:
  std::mutex deliver_mu_;  // one delivery at a time; held while the handler runs
  std::mutex queue_mu_;    // pending_; taken inside the pool's lock or alone
  std::vector<WorkerInfo> pending_;
  WorkerStateHandler handler_;  // under deliver_mu_
};

}  // namespace lull::manager
