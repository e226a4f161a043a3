#pragma once
// `lull serve` without the sockets: lull's Dispatcher between the front end
// and a Backend, made thread-safe. It builds none of its parts: the
// Server (runtime/server/server.h) plugs in the backend (TorchServe
// over HTTP; a fake in tests) and the health source. HTTP threads call serve(); batch completions and
// health events may arrive on other threads; one mutex serializes all of
// them around the Dispatcher, which is single-threaded by design.
//
// The Dispatcher is the one record of worker availability (health events go
// straight to set_worker_available) and retries a failed batch once on the
// next available worker. The session only answers each waiting query from
// its batch's final result: its prediction (BatchResult::outputs), the
// model's own error for an input it rejected (BatchResult::input_status; the
// rest of the batch is answered as usual), or 503 with the reason. 504 when
// no answer comes within answer_timeout_ms of its arrival, on the session's
// clock (a Controller on a ControlLoop: ServeOptions::loop). Worker up/down is logged to
// stderr, one line each; policy switches too, at most one line a second.
// A query's time (deadline, latency) counts from its arrival at the front
// end (serve_async's waited_us back from entry), before the lock, so time
// spent in the front end and waiting for the lock under overload is queue time.
//
// With a worker pool (`lull serve --autoscale`, ServeOptions::pool_managed)
// the Dispatcher's worker slots start vacant: a slot joins the rotation only
// when add_worker() says its pool found it up (and the health source agrees),
// and leaves it through drain_worker() (no new queries, its queue moves to
// the others, `drained` runs once its batch in flight is done: DrainTracker)
// or remove_worker().
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/core/background_policy_provider.h"
#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/core/dispatcher.h"
#include "runtime/log/log.h"
#include "runtime/core/drain_tracker.h"
#include "runtime/core/policy_table.h"
#include "runtime/frontend/frontend.h"
#include "runtime/session/latency_drift.h"
#include "runtime/session/serve_metrics.h"
#include "runtime/core/worker_health.h"

namespace lull::session {

struct ServeOptions {
  std::int64_t answer_timeout_ms = 30000;  // an HTTP thread never waits longer (then 504)
  std::vector<std::string> worker_names;   // /metrics labels (URLs); default "0", "1", ...
  // The bouncer (runtime/core/admission.h): refuse at once, with 503 and
  // Retry-After, a query even the fastest model cannot answer by its
  // deadline. Off (the paper's behaviour): every query is served, late ones
  // counted as violations.
  bool reject_late = false;
  // Latency drift (runtime/session/latency_drift.h): each answered batch's
  // time from send to answer is checked against the profile; a pair that
  // starts or stops drifting is logged in one line and counted in /metrics.
  // When the set records its compile percentile, it becomes the rule's
  // plan_percentile and the verdict's percentile is at most it.
  bool detect_drift = true;
  DriftRule drift_rule;
  // Called, outside the session's lock, each time a pair starts drifting
  // (the DriftRecompiler: --recompile-on-drift). Must not block for long: it runs on the
  // backend's completion thread.
  std::function<void(const DriftEvent&)> on_drift;
  // The other worker counts of a policy library (the session starts on
  // `table`; the Dispatcher picks by the workers up and the load). Empty:
  // `table` alone, whose worker count must be the servers'.
  std::vector<core::PolicyTable> library;
  // Online compilation (nullptr: off); must outlive the session.
  core::BackgroundPolicyProvider* online = nullptr;
  // Slots join the rotation only through add_worker() (a worker pool decides).
  bool pool_managed = false;
  // Called with each query's arrival time, under the session's lock (keep it
  // short; the autoscaler's arrival count).
  std::function<void(std::int64_t arrival_us)> on_arrival;
  // More Prometheus text appended to /metrics (called without the lock).
  std::function<std::string()> extra_metrics;
  // Shard I of G (`lull serve --shard`): G, so that the burstiness estimate
  // of the shard's every G-th arrival is the whole stream's.
  int arrival_thinning = 1;
  // A fleet's group ("class 'a', kind 'b'"): named in the worker and drift
  // log lines, so a line says whose server it is. Empty: one system.
  std::string group;
  // The loop (on the session's clock, not started yet; its owner starts it
  // and stops it before the session goes) that ticks the reaper of queries
  // unanswered at answer_timeout_ms. nullptr: a real-time loop of the
  // session's own. Tests on a virtual clock pass a virtual one.
  core::ControlLoop* loop = nullptr;
};

class ServeSession final : public frontend::QueryService {
 public:
  // Everything passed must outlive the session. Takes over the backend's
  // completion handler and the health source's handler; a backend or health
  // source that calls them from its own threads must be stopped before the
  // session is destroyed. Workers the health source reports down now start
  // out of rotation. `table` names the models and the SLO.
  ServeSession(const core::PolicyTable& table, core::Backend& backend, core::WorkerHealth& health, core::Clock& clock,
               ServeOptions options = {});
  ~ServeSession() override;

  // Answers every query still waiting with 503, so HTTP threads return;
  // later queries get 503 at once.
  void shutdown();

  // Blocks until the query is answered, at most answer_timeout_ms.
  frontend::Answer serve(std::string input) override;
  // The front end's form: `done` is called once, under the session's lock
  // (it must not call back into the session), or at once when refused.
  void serve_async(std::string input, std::int64_t waited_us, std::function<void(frontend::Answer)> done) override;
  // The same as a future (tests drive it this way).
  std::future<frontend::Answer> submit(std::string input);
  std::string metrics_text() override;
  // Every worker serves every model, so: some worker is in rotation.
  bool healthy() override;
  int workers_up() override;
  // The arrival pattern whose policies are served now (the burstiness
  // estimate's choice, runtime/core/pattern_switcher.h). Any thread.
  ArrivalProcess served_pattern();
  // From any thread, without the session's lock: the table (same task, SLO
  // and models in the same order; a set recompiled from the observed
  // latencies) replaces its worker count's policies at the next arrival
  // (PolicyCatalog::replace). Logged in one line, counted in /metrics.
  void replace_policies(core::PolicyTable table) { dispatcher_.policy_inbox().post_replacement(std::move(table)); }

  // Model variants (manager/variant_switcher.h): puts `tables` (one per worker
  // count, each with the same task, SLO and models as the catalog; policies
  // that use fewer of them) in use at once, every count replaced under one
  // lock, then waits until no batch is in flight or waiting for a retry on
  // the models with the ids in `dropped`, so that they may be unloaded.
  // Throws std::runtime_error when that takes longer than `timeout_ms`, and
  // std::invalid_argument when the catalog refuses a table.
  void swap_policies_and_wait(const std::vector<core::PolicyTable>& tables, const std::vector<int>& dropped,
                              std::int64_t timeout_ms);

  // Worker pools (pool_managed): the slot's worker (`name`: its URL) is up.
  void add_worker(int slot, const std::string& name);
  // Out of rotation now; `drained` runs (under the session's lock, once) when
  // the slot has no batch in flight, possibly before this returns.
  void drain_worker(int slot, std::function<void()> drained);
  // The slot's worker is gone (stopped or failed): out of rotation, vacant.
  void remove_worker(int slot);
  int worker_slots() const { return workers(); }
  // Queries received and not yet answered.
  std::size_t pending();

 private:
  // One query from its arrival to its answer: the session's only record of
  // it. The Dispatcher's queues hold its id and deadline; a batch carries its
  // input to the backend (BatchRequest::inputs); answer() ends it.
  struct PendingQuery {
    std::shared_ptr<const std::string> input;
    std::int64_t arrival_us = 0;                 // on the session's clock; its deadline counts from here
    std::function<void(frontend::Answer)> done;  // called once, under mu_
  };
  // A batch the backend has, by its first query (a retry is sent after its
  // failed batch was reported, so the key is free again).
  struct SentBatch {
    int model = 0;
    std::int64_t sent_us = 0;
  };
  struct WorkerBatches {
    std::uint64_t ok = 0, failed = 0;
  };

  // Answers 504 to the queries still waiting at answer_timeout_ms: a
  // Controller (the session's only periodic decision), due at the earliest
  // give-up time, woken when a query arrives to an empty queue.
  class LateQueryReaper final : public core::Controller {
   public:
    explicit LateQueryReaper(ServeSession& session) : session_(session) {}
    std::string controller_name() const override { return "answer timeouts"; }
    std::int64_t next_tick_us() const override { return session_.next_give_up_us(); }
    void tick(std::int64_t now_us) override { session_.reap_late_queries(now_us); }
    void wake() const { wake_loop(); }

   private:
    ServeSession& session_;
  };
  std::int64_t next_give_up_us();               // the earliest give-up time (kNever: none waits)
  void reap_late_queries(std::int64_t now_us);  // answers those due at now_us with 504
  // The bouncer's verdict for a query arriving now (under mu_); 0 admits,
  // else the Retry-After seconds.
  int refuse_seconds(std::int64_t arrival_us) const;
  void on_backend_done(const core::BatchResult& r);  // backend's thread
  void on_health(int worker, bool up);               // health source's thread
  // Starts the batches the Dispatcher returned while `lock` (on mu_) was
  // held: counted under it, sent on the backend after releasing it.
  void send(std::unique_lock<std::mutex>& lock, std::vector<core::BatchRequest> batches);
  void log_policy_switch();  // under mu_, after an arrival
  void log_replacement();    // under mu_, after an arrival
  int workers() const { return dispatcher_.pool_workers(); }
  std::string group_prefix() const { return options_.group.empty() ? "" : options_.group + ": "; }
  // The session's one way to log: every line names its group (a fleet's
  // class and kind), so a fleet's worker, policy and drift lines say whose.
  void log_line(log::Level level, const char* format, ...) const __attribute__((format(printf, 3, 4)));
  void on_final_result(const core::BatchResult& r);  // under mu_, from Dispatcher::complete
  // Times an answered batch, sent at `sent_us`, against the profile (under
  // mu_); true when a pair started drifting with it (*event then says which).
  bool check_drift(const core::BatchResult& r, std::int64_t sent_us, DriftEvent* event);
  // Calls the query's `done` and forgets it (under mu_); false if it was not waiting.
  bool answer(core::QueryId id, frontend::Answer a);

  const core::PolicyTable& table_;
  core::Backend& backend_;
  core::Clock& clock_;
  core::WorkerHealth& health_;
  ServeOptions options_;
  core::Dispatcher dispatcher_;  // no backend: it returns the batches to start (send())

  std::mutex mu_;
  bool shut_down_ = false;
  core::QueryId next_id_ = 0;
  // Policy switches, logged at most once a second (log_policy_switch).
  int current_policy_ = 0, logged_policy_ = 0, switches_since_log_ = 0;
  std::int64_t last_log_us_ = 0;
  int logged_generation_ = 0, logged_rejected_ = 0;  // replacements and refused mail logged so far
  std::unordered_map<core::QueryId, PendingQuery> pending_;
  std::unordered_map<core::QueryId, SentBatch> sent_;  // started and not reported
  std::condition_variable batch_done_;                 // a batch was reported (swap_policies_and_wait)
  std::vector<WorkerBatches> worker_batches_;
  std::vector<char> admitted_;          // the slot may be in rotation (always, unless pool_managed)
  std::vector<char> been_in_rotation_;  // its worker was in rotation once: coming up is a return
  core::DrainTracker drains_;
  std::unique_ptr<LatencyDriftDetector> drift_;  // null: detection off
  ServeCounters counters_;
  // The pending queries in arrival order with each one's give-up time (one
  // timeout for all, so the front's is the earliest); the reaper ticks then.
  // Answered ones are dropped from the front as it gets to them.
  std::deque<std::pair<core::QueryId, std::int64_t>> by_arrival_;
  LateQueryReaper reaper_{*this};
  std::unique_ptr<core::ControlLoop> own_loop_;  // last: when options_.loop is none; started once all above exists
};

}  // namespace lull::session
