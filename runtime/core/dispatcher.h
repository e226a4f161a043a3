#pragma once
// lull's scheduler (mdp-spec.md 7): deadlines stamped centrally, round-robin
// into per-worker deadline-ordered queues, and an idle worker with queued
// queries asks the model selector for (model, batch) under the policy of the
// current load. The same code runs under the simulator and a real backend.
//
// It is also the one record of which workers are up (a server's health
// checks call set_worker_available) and the place where a failed batch is
// retried: once, as one batch, on the next available worker.
//
// Two ways to drive it. With a Backend (the simulator, tests) it starts each
// batch on it and takes its completions. Without one (the serve session) it
// calls out to nothing: on_arrival_at, complete and set_worker_available
// return the batches to start, in order, and the caller starts them and hands
// each result to complete().
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "runtime/core/burstiness_estimator.h"
#include "runtime/core/central_queue.h"
#include "runtime/core/pattern_switcher.h"
#include "runtime/core/policy_catalog.h"
#include "runtime/core/policy_inbox.h"
#include "runtime/core/policy_provider.h"
#include "runtime/core/policy_table.h"
#include "runtime/core/scheduler.h"
#include "runtime/core/worker_queue.h"

namespace lull::core {

// The policies a Dispatcher chooses from and the workers it drives.
struct DispatcherPolicies {
  std::vector<PolicyTable> library;  // one table per worker count (a library of one is fine)
  int pool_workers = 0;              // workers it can drive (0: the first table's)
  // Per pool worker: whether it starts available (empty: all). The one
  // situation the first choice of policy (and online request) is made for.
  std::vector<char> available_at_start;
  // Online compilation: asked for the policy missing for (workers up, load);
  // until it arrives the catalog's conservative choice serves. nullptr: the
  // library only (the stale policy when workers go down or the load leaves
  // the grid).
  PolicyProvider* provider = nullptr;
};

class Dispatcher final : public Scheduler {
 public:
  // One table; its worker count sets the workers.
  Dispatcher(const PolicyTable& table, Clock& clock, Backend& backend, const SchedulerOptions& options = {});
  Dispatcher(DispatcherPolicies policies, Clock& clock, Backend& backend, const SchedulerOptions& options = {});
  // No backend: the caller starts the batches returned (see above).
  Dispatcher(DispatcherPolicies policies, Clock& clock, const SchedulerOptions& options = {});

  // Online compilation. A table produced for this dispatcher joins its
  // catalog and the choice is made again at once (the dispatcher's thread:
  // the simulator's event loop, or a server under its lock)...
  void add_policies(const PolicyTable& table);
  // The same for a table that replaces its worker count's policies
  // (PolicyCatalog::replace: --recompile-on-drift).
  void replace_policies(const PolicyTable& table);
  // ...or, from any thread, through the inbox, picked up at the next arrival.
  // Mail the catalog refuses (another task or SLO, models in another order)
  // is dropped and counted, never thrown into an arrival.
  PolicyInbox& policy_inbox() { return inbox_; }
  int mail_rejected() const { return mail_rejected_; }
  const std::string& last_mail_error() const { return last_mail_error_; }
  // The policy now in use (worker count, load) and the catalog it came from.
  const PolicyChoice& current_choice() const { return choice_; }
  const PolicyCatalog& catalog() const { return catalog_; }
  int workers_available() const { return num_available_; }
  int pool_workers() const { return static_cast<int>(queues_.size()); }
  // Requests made of the provider so far.
  int policies_requested() const { return requests_; }
  // The arrivals' pattern (runtime/core/pattern_switcher.h): the latest estimate
  // (taken once per closed bin), the pattern the policy is chosen for, and
  // a hook called each time the estimate goes beyond every compiled pattern
  // while no provider can compile one (the caller warns: it serves the most
  // bursty pattern held).
  const BurstinessEstimate& burstiness_estimate() const { return estimate_; }
  const PatternSwitcher& pattern() const { return pattern_; }
  void on_pattern_beyond_library(std::function<void(const BurstinessEstimate&, const ArrivalProcess& serving)> f) {
    on_beyond_ = std::move(f);
  }
  void on_arrival(QueryId id) override;
  // The same for a query the caller received at `arrival_us` (<= now): its
  // deadline counts from then, so time spent before the Dispatcher saw it
  // (waiting for a lock) is queue time. Returns the batches to start (none
  // with a backend: it started them).
  std::vector<BatchRequest> on_arrival_at(QueryId id, std::int64_t arrival_us);
  // A batch it started finished (without a backend: the caller reports each
  // result here once). Frees the worker, retries a failed batch or reports
  // the final outcome to on_batch_done; returns the batches to start next.
  std::vector<BatchRequest> complete(const BatchResult& r);
  // The worker the next arrival goes to (round-robin over available workers), without advancing.
  int peek_next_worker() const { return central_.peek_available_worker(available_); }
  // What is left of the worker's batch in flight by its profiled latency
  // lat(model, batch) from its start; 0 when idle or overrun.
  std::int64_t busy_remaining_us(int worker) const;
  int queued(int worker) const { return queues_[worker].size(); }
  // The worker has a batch on the backend (at most one at a time).
  bool busy(int worker) const { return busy_.at(static_cast<std::size_t>(worker)) != 0; }
  // Failed batches waiting for their retry worker to become idle.
  int retries_waiting(int worker) const {
    return static_cast<int>(retries_.at(static_cast<std::size_t>(worker)).size());
  }

  // Worker availability: a server's health checks, the simulator's --fail
  // and --workers-at. Workers start as available_at_start says. Each change
  // chooses the policy again for the workers now up (and, with a provider,
  // asks for a missing one). Round-robin skips unavailable workers, and a worker marked
  // unavailable hands its queued queries (deadlines kept) and waiting
  // retries to the available ones, which start them if idle. Its batch in
  // flight is the backend's to fail or finish.
  // Returns the batches to start (none with a backend).
  std::vector<BatchRequest> set_worker_available(int worker, bool available);
  bool worker_available(int worker) const { return available_[worker] != 0; }

  // Failures: a batch reported with ok = false is retried once, as one batch
  // on the next available worker after it (never itself), which runs it as
  // soon as it is idle, before its own queue: on the failed batch's model if
  // the earliest deadline still allows lat(model, batch) at that moment,
  // else on the fastest model (model 0). Observers (on_batch_done) see only
  // final outcomes: a retried batch's result has `retried` set; a failure
  // with no other worker available, or a failed retry, is reported failed.

 private:
  struct Retry {
    int model = 0;
    std::vector<QueryId> queries;
    std::int64_t earliest_deadline_us = 0;
  };
  struct Running {  // the batch a busy worker runs
    std::int64_t earliest_deadline_us = 0;
    bool retry = false;
    std::int64_t expected_end_us = 0;  // start + lat(model, batch)
  };

  Dispatcher(DispatcherPolicies policies, Clock& clock, Backend* backend, const SchedulerOptions& options);
  void handle_done(const BatchResult& r) override { complete(r); }
  // A batch decided: to the backend at once, or onto started_ for the caller.
  void start(const BatchRequest& batch);
  std::vector<BatchRequest> take_started();
  void try_dispatch(int worker);
  void start_retry(int worker);
  // The next available worker after `worker` in round-robin order, never
  // `worker` itself; -1 when there is none.
  int next_available_after(int worker) const;
  void dispatch_idle_available();
  std::int64_t expected_end_us(int model, std::size_t batch) const;
  // Picks up delivered tables, chooses the policy for (workers up, load) and
  // asks the provider for a missing one.
  void refresh_policy();
  void apply_mail(const PolicyMail& mail);

  PolicyCatalog catalog_;
  PolicyProvider* provider_;
  PatternSwitcher pattern_;
  BurstinessEstimate estimate_;
  std::uint64_t estimated_at_bins_ = ~std::uint64_t{0};
  std::function<void(const BurstinessEstimate&, const ArrivalProcess&)> on_beyond_;
  PolicyInbox inbox_;
  PolicyChoice choice_;
  PolicyRequest last_request_;  // not repeated while the catalog still misses it
  int requests_ = 0;
  int mail_rejected_ = 0;
  std::string last_mail_error_;
  CentralQueue central_;
  std::vector<WorkerQueue> queues_;
  std::vector<char> busy_;
  std::vector<Running> running_;
  std::vector<std::deque<Retry>> retries_;
  std::vector<char> available_;
  int num_available_;
  std::vector<Query> moved_;           // reused by set_worker_available
  BatchRequest request_;               // reused so steady state does not allocate per batch
  std::vector<BatchRequest> started_;  // without a backend: decided, not yet returned
  BatchResult retried_result_;         // reused for observers of retry batches
};

}  // namespace lull::core
