#pragma once
// The simulator's worker pool: no process, no network. A worker asked for at
// time t is up at t + a provisioning delay (ProvisioningDelay: fixed or a
// seeded draw), read from the injected Clock, so the same autoscaler code
// runs over virtual time in `lull simulate` and over wall time in `lull
// serve`. Pure and deterministic: state changes only in poll() (list_workers
// polls first), in start order within one instant.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/manager/provisioning_delay.h"
#include "runtime/manager/worker_pool.h"

namespace lull::manager {

class SimulatedWorkerPool final : public WorkerPool {
 public:
  // `clock` must outlive the pool. Workers already up at construction:
  // `initial_up` (ids sim-0 .. sim-(initial_up-1)).
  SimulatedWorkerPool(const core::Clock& clock, ProvisioningDelay delay, int initial_up = 0);

  std::vector<std::string> start_workers(int n) override;
  void stop_worker(const std::string& id) override;
  std::vector<WorkerInfo> list_workers() override;
  void set_drain_hook(DrainHook hook) override { drain_hook_ = std::move(hook); }
  void set_state_handler(WorkerStateHandler handler) override { handler_ = std::move(handler); }

  // Moves every starting worker whose delay has passed to up, as of the
  // clock's time, calling the state handler for each.
  void poll();
  // The earliest time a starting worker becomes up; -1 when none is starting
  // (the simulator schedules its next pool event there).
  std::int64_t next_change_us() const;
  // Fault injection for controller tests: the worker dies now (state failed, with `reason`).
  void fail_worker(const std::string& id, const std::string& reason);

 private:
  struct Worker {
    WorkerInfo info;
    std::int64_t ready_us = 0;  // when a starting worker comes up
  };
  Worker& find(const std::string& id);
  void set_state(Worker& w, WorkerState s, std::int64_t at_us);
  void on_drained(const std::string& id);

  const core::Clock& clock_;
  ProvisioningDelay delay_;
  std::vector<Worker> workers_;
  int next_id_ = 0;
  DrainHook drain_hook_;
  WorkerStateHandler handler_;
};

}  // namespace lull::manager
