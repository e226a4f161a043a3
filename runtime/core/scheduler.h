#pragma once
// What the simulator (or a server) drives: queries in, batches out through a
// Backend, completions back. Two implementations: lull's Dispatcher
// (round-robin into per-worker queues, MDP policies) and the baselines'
// FifoDispatcher (one central FIFO queue, a fixed plan per load). Both share
// the load monitor and the switch-on-grid-point logic defined here.
#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/clock.h"
#include "runtime/core/load_monitor.h"
#include "runtime/core/policy_switcher.h"

namespace lull::core {

struct SchedulerOptions {
  std::int64_t load_window_us = 500'000;
  // The scheduler sees every G-th arrival of the stream its policies model
  // (shard I of G, runtime/core/shard.h): the burstiness estimate is scaled
  // back to that stream (BurstinessEstimator::set_thinning).
  int arrival_thinning = 1;
};

// Decisions taken under each grid point (compiled load), for reports.
struct GridUsage {
  std::uint64_t decisions = 0;
  std::uint64_t queries = 0;
  std::uint64_t fallbacks = 0;  // decisions that took the fallback path
};

class Scheduler {
 public:
  // `grid_loads_qps`: the compiled loads, ascending. Registers itself as the
  // backend's completion handler. No backend (the Dispatcher's returning
  // form): the caller starts the batches it is handed and reports their results.
  Scheduler(std::vector<double> grid_loads_qps, Clock& clock, Backend* backend, const SchedulerOptions& options);
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A query arrives now (clock time). Not thread-safe: a multi-threaded server
  // must serialize on_arrival and backend completions.
  virtual void on_arrival(QueryId id) = 0;

  // Called for every finished batch with the clock time, after the scheduler
  // has updated its own state.
  void on_batch_done(std::function<void(const BatchResult&, std::int64_t now_us)> f) { observer_ = std::move(f); }
  void on_new_policy_needed(std::function<void(const NewPolicyNeeded&)> f) {
    switcher_.on_new_policy_needed(std::move(f));
  }

  const std::vector<GridUsage>& usage() const { return usage_; }
  int current_grid_point() const { return switcher_.current(); }
  int new_policy_events() const { return switcher_.events_raised(); }
  double last_estimate_qps() const { return last_estimate_qps_; }
  const BurstinessEstimator& burstiness() const { return monitor_.burstiness(); }

 protected:
  // Records the arrival in the load monitor and returns the grid point to use.
  int note_arrival(std::int64_t now_us);
  virtual void handle_done(const BatchResult& r) = 0;
  void notify_done(const BatchResult& r) {
    if (observer_) observer_(r, clock_.now_us());
  }

  Clock& clock_;
  Backend* backend_;  // nullptr: batches are returned to the caller
  std::vector<GridUsage> usage_;

 private:
  LoadMonitor monitor_;
  PolicySwitcher switcher_;
  double last_estimate_qps_ = 0;
  std::function<void(const BatchResult&, std::int64_t)> observer_;
};

}  // namespace lull::core
