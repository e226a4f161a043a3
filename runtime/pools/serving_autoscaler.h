#pragma once
// `lull serve --autoscale`: the Autoscaler (the same controller code as
// `lull simulate --autoscale`) driving a real WorkerPool (model-server
// processes, a Kubernetes Deployment) under a running ServeSession.
//
// The session's Dispatcher has a fixed number of worker slots (slots(): room
// for every worker allowed plus as many draining), vacant at first. A pool
// worker that comes up (the pool ran its health and model checks) takes a
// free slot (core::SlotMap, as in `lull simulate --autoscale`) and joins
// the rotation there (core::WorkerSlots; SessionSlots: the TorchServe
// backend learns its URL and the session routes to it). A worker being
// removed is drained through the pool's drain hook (the session stops
// routing to it, moves its queue to the others and says when its batch in
// flight is done); when the pool reports it stopped or failed it leaves its
// slot (what it still had in flight fails over to the others), now free.
//
// It is a Controller of lull serve's ControlLoop (runtime/core/control_loop.h),
// ticking on the real clock once started: arrivals the session reported are
// fed to the autoscaler, then it decides and acts. Every decision that acts
// is one log line with its reason and numbers (ScaleDecision::log_line). A
// worker that fails to start (the actuator's command failed, or its checks
// did not pass) puts scaling on hold for a backoff that doubles with each
// failure in a row (retry_base .. retry_max) and resets when a worker comes
// up: meanwhile the server keeps serving with what is up. Each failure is
// logged with its reason and shown in /metrics (metrics_text). A worker
// that was up and that its pool reports starting again (a Kubernetes pod no
// longer ready: its container died and is being restarted) leaves rotation
// the same way and takes a slot again once up.
#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/manager/autoscaler.h"
#include "runtime/manager/pattern_capacity.h"
#include "runtime/manager/worker_pool.h"
#include "runtime/core/policy_table.h"
#include "runtime/core/slot_map.h"
#include "runtime/core/worker_slots.h"

namespace lull::pools {

struct ServingAutoscalerOptions {
  manager::AutoscaleOptions autoscale;
  manager::CapacityTarget target;
  int initial_workers = 0;                      // started by start_initial(); 0: the autoscaler's floor
  std::int64_t retry_base_us = 1'000'000;       // scaling on hold after a worker failed to start...
  std::int64_t retry_max_us = 30'000'000;       // ...doubling per failure in a row, up to this
  std::function<void(const std::string&)> log;  // every line (scale decisions, failures); may be empty
  std::function<void()> refresh;                // before each decision (KubernetesPool::refresh); may be empty
  std::function<std::string()> pool_metrics;    // the pool's own /metrics families (KubernetesPool); may be empty
  // The arrival pattern being served (the session's estimate, ServeSession::
  // served_pattern), read before each decision: when it changes, capacity
  // comes from the library's sets for it (CapacityTable). Empty: Poisson's.
  std::function<ArrivalProcess()> pattern;
};

class ServingAutoscaler final : public core::Controller {
 public:
  // `pool` and `clock` must outlive it. Throws std::invalid_argument for
  // options out of range (Autoscaler's checks).
  ServingAutoscaler(const std::vector<core::PolicyTable>& library, ServingAutoscalerOptions options,
                    manager::WorkerPool& pool, const core::Clock& clock);
  ~ServingAutoscaler() override;  // stop()

  // The Dispatcher slots the session and backend must have (all vacant).
  int slots() const { return slot_map_.slots(); }
  // The session's arrival hook (ServeOptions::on_arrival); any thread.
  void record_arrival(std::int64_t t_us);
  // Plugs the pool's hooks into the slots (SessionSlots: a backend and a
  // session; it must outlive stop()). Before start_initial(). Throws
  // std::invalid_argument unless it has slots() slots.
  void attach(core::WorkerSlots& slots);
  // Starts the initial workers and waits until no worker of the pool is
  // starting (each up or failed), at most timeout_us, or until
  // request_stop(). Returns how many are up. The first tick is due one
  // autoscale.tick_us after it returns (none before).
  int start_initial(std::int64_t timeout_us);
  // The Controller: a tick every autoscale.tick_us of the clock (after a
  // slow one, no burst of catch-up ticks).
  std::string controller_name() const override { return "autoscale"; }
  std::int64_t next_tick_us() const override { return next_tick_us_.load(); }
  void tick(std::int64_t now_us) override;
  // One decision at now_us of the clock (tick(); tests call it by hand).
  // The autoscaler itself counts time from construction, so its log lines
  // say "t=12.000s" from the start of serving.
  manager::ScaleDecision decide(std::int64_t now_us);
  // No pool hook reaches the session afterwards (pending drains are
  // dropped). Call it once the ControlLoop that ticks it has stopped. The
  // pool itself is the caller's to stop.
  void stop();
  // Any thread (a signal watcher): ends start_initial()'s wait at once.
  void request_stop();
  bool stop_requested();

  // Prometheus text: workers desired/starting/up/draining, the forecast,
  // scale events by reason, worker failures, the backoff and the last failure.
  std::string metrics_text();
  const manager::Autoscaler& autoscaler() const { return scaler_; }
  // The slot a worker holds; -1 if none.
  int slot_of(const std::string& worker_id);
  // The management URLs of the workers in the session's rotation (up, not
  // draining): the model variants' worker list. Any thread.
  std::vector<std::string> management_urls_up();
  // Model variants: the capacity table of this library (the variant now in
  // use; same worker counts) decides from the next tick on, read for the
  // arrival pattern capacity is read for now (PatternCapacity). Any thread.
  // Throws std::invalid_argument for another set of worker counts.
  void use_library(const std::vector<core::PolicyTable>& library);

 private:
  void on_state(const manager::WorkerInfo& w);
  void on_drain(const std::string& id, std::function<void()> drained);
  // Out of rotation, its slot vacated (in flight: failed over, `why`) and free. Under slots_mu_.
  void release_slot(const std::string& id, const std::string& why);
  // The pool's workers that hold a slot the backend has out of rotation
  // (ejected, or failing its health checks).
  std::set<std::string> out_of_rotation();
  void say(const std::string& line);
  // A pattern other than the one capacity is read for: the table for it, from the next decision.
  void follow_pattern(const ArrivalProcess& served);

  ServingAutoscalerOptions options_;
  manager::WorkerPool& pool_;
  const core::Clock& clock_;
  std::int64_t t0_us_;                 // the clock at construction: the autoscaler's time 0
  manager::PatternCapacity capacity_;  // the library in use and the pattern read for; under stats_mu_ once built
  manager::Autoscaler scaler_;         // the manager thread's (or tick()'s caller's) alone

  std::mutex arrivals_mu_;  // a leaf: taken under the session's lock
  std::vector<std::int64_t> arrivals_;

  std::mutex slots_mu_;  // slot map, the slots' hooks
  core::WorkerSlots* slots_ = nullptr;
  bool detached_ = false;
  std::function<void()> close_gate_;  // stop(): pending `drained` callbacks no longer reach the pool
  core::SlotMap slot_map_;
  std::map<std::string, manager::WorkerState> state_of_;
  std::map<std::string, std::string> management_of_;  // workers holding a slot

  mutable std::mutex stats_mu_;  // what /metrics shows
  int desired_ = 0;
  manager::ScaleDecision last_;
  std::map<std::string, std::uint64_t> events_by_reason_;
  std::map<std::string, std::uint64_t> failures_by_phase_;
  std::string last_failure_, last_failure_worker_;
  std::uint64_t not_ready_ = 0;  // workers up, then not ready (out of rotation until up again)
  int failures_in_row_ = 0;
  std::int64_t hold_until_us_ = -1;  // scaling on hold (backoff) until then
  std::int64_t last_tick_us_ = 0;
  std::unique_ptr<manager::CapacityTable> next_capacity_;  // use_library's or a new pattern's, taken by the next tick

  std::atomic<std::int64_t> next_tick_us_{core::Controller::kNever};
  std::mutex run_mu_;  // start_initial()'s wait
  std::condition_variable run_cv_;
  bool stop_ = false;
};

}  // namespace lull::pools
