#pragma once
// lull's scheduler (mdp-spec.md 7): deadlines stamped centrally, round-robin
// into per-worker deadline-ordered queues, and an idle worker with queued
// queries asks the model selector for (model, batch) under the policy of the
// current load. The same code runs under the simulator and a real backend.
#include <vector>

#include "runtime/central_queue.h"
#include "runtime/policy_table.h"
#include "runtime/scheduler.h"
#include "runtime/worker_queue.h"

namespace lull::runtime {

class Dispatcher final : public Scheduler {
 public:
  // `table` must outlive the dispatcher; its worker count sets the workers.
  Dispatcher(const PolicyTable& table, Clock& clock, Backend& backend, const SchedulerOptions& options = {});
  void on_arrival(QueryId id) override;
  int queued(int worker) const { return queues_[worker].size(); }

  // Worker availability, for real backends whose workers can fail (the
  // TorchServe backend's health checks); every worker starts available and
  // the simulator never changes it. Round-robin skips unavailable workers,
  // and a worker marked unavailable hands its queued queries (deadlines
  // kept) to the available ones, which start them if idle. Its batch in
  // flight is the backend's to fail or finish.
  void set_worker_available(int worker, bool available);
  bool worker_available(int worker) const { return available_[worker] != 0; }

 private:
  void handle_done(const BatchResult& r) override;
  void try_dispatch(int worker);

  const PolicyTable& table_;
  CentralQueue central_;
  std::vector<WorkerQueue> queues_;
  std::vector<char> busy_;
  std::vector<char> available_;
  int num_available_;
  std::vector<Query> moved_;  // reused by set_worker_available
  BatchRequest request_;  // reused so steady state does not allocate per batch
};

}  // namespace lull::runtime
