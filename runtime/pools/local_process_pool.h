#pragma once
// Workers as model-server processes on this machine. Each new worker gets a
// free port from lull, and its command template (e.g. "python3
// lull_modelserver.py --replay-profile P.json --port {port}") is run with
// {port} (and {management_port}, which gets a second port, for a TorchServe
// with two) replaced. It counts as up only when its health check (GET /ping
// answers 200) and its model check (every model the policies name is loaded:
// runtime/upstream/torchserve/model_check.h) pass, within start_timeout_ms; otherwise it is
// failed, with the reason (its exit status and last log line, or the check
// that did not pass), and its process is stopped.
//
// stop_worker() drains first (the drain hook: the serving layer sends it
// nothing new and says when its batches in flight have finished, or
// drain_timeout_ms passes), then sends SIGTERM and, after stop_grace_ms,
// SIGKILL. A process that dies on its own is reported failed with how it
// died. One supervisor does all of this: a Controller
// (runtime/core/control_loop.h) ticking every tick_ms of its loop's clock,
// and at once after a pass that changed a state or when a worker is stopped
// or drained; deadlines are read off the pool's clock. The checks run on
// their own threads so a hanging server holds up nobody.
#include <atomic>
#include <condition_variable>
#include <limits>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/pools/process_launcher.h"
#include "runtime/manager/worker_pool.h"
#include "runtime/manager/worker_state_notices.h"
#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::pools {

struct LocalProcessPoolOptions {
  std::string command;              // template with {port}; run by /bin/sh -c "exec ..."
  std::vector<std::string> models;  // the model check; empty: health check only
  std::string management_key;       // TorchServe's management key for the model check
  // A new worker's own keys (TorchServeKeyFiles per server), for its /ping
  // and model check; overrides management_key when set.
  std::function<torchserve::TorchServeKeys(const torchserve::WorkerEndpoint&)> keys_for;
  // One attempt of a new worker's check: "" when it is up with its models,
  // else why not. Empty: GET /ping, then TorchServe's model check of `models`
  // (another protocol's servers: cli/serve_backend.h).
  std::function<std::string(net::HttpTransport&, const torchserve::WorkerEndpoint&, std::int64_t timeout_ms)> check;
  std::string log_dir;  // DIR/ID.log gets each worker's output; empty: a new /tmp dir
  // Several pools on one host (lull shards, docs/operators-guide.md): pool I of G
  // takes only ports p with p mod G == I and names its workers
  // "local-I-N" (id_prefix "local-I-"), so no two pools pick the same port,
  // nor write the same log file in a shared log_dir.
  int port_modulus = 1, port_residue = 0;
  std::string id_prefix = "local-";
  std::int64_t start_timeout_ms = 60000;
  std::int64_t check_interval_ms = 100;  // between failed health/model checks
  std::int64_t drain_timeout_ms = 30000;
  std::int64_t stop_grace_ms = 5000;  // SIGTERM -> SIGKILL
  std::int64_t tick_ms = 20;          // the supervisor's period
};

class LocalProcessPool final : public manager::WorkerPool {
 public:
  // `client`, `clock` and `launcher` must outlive the pool. Throws
  // std::invalid_argument when the template lacks {port}. The supervisor
  // joins `loop` (not started yet; its owner starts it and stops it before
  // the pool goes; tests tick it themselves), or, with none, a real-time
  // ControlLoop of the pool's own on `clock`.
  LocalProcessPool(net::HttpTransport& client, const core::Clock& clock, LocalProcessPoolOptions options,
                   ProcessLauncher& launcher = system_process_launcher(), core::ControlLoop* loop = nullptr);
  // Stops every process still running (SIGTERM, then SIGKILL after the grace period).
  ~LocalProcessPool() override;

  std::vector<std::string> start_workers(int n) override;
  void stop_worker(const std::string& id) override;
  std::vector<manager::WorkerInfo> list_workers() override;
  void set_drain_hook(manager::DrainHook hook) override;
  void set_state_handler(manager::WorkerStateHandler handler) override;

  // The worker's process id (tests kill workers to play crashes); -1 once reaped or unknown.
  int pid_of(const std::string& id);
  const std::string& log_dir() const { return options_.log_dir; }
  core::Controller& supervisor() { return supervisor_; }

 private:
  // Ends a worker's start-up checks at once, also mid-wait between two checks.
  struct CheckCancel {
    std::mutex mu;
    std::condition_variable cv;
    bool cancelled = false;
    void cancel();
    bool is_cancelled();
    // Waits `ms` or until cancelled; true when cancelled.
    bool wait_for(std::int64_t ms);
  };
  struct Worker {
    manager::WorkerInfo info;
    std::unique_ptr<WorkerProcess> process;
    std::int64_t deadline_us = 0;    // start-up or drain deadline
    std::future<std::string> check;  // start-up checks: "" passed, else why not
    std::shared_ptr<CheckCancel> cancel_check = std::make_shared<CheckCancel>();
    bool drained = false;
    std::int64_t term_sent_us = -1;  // SIGTERM sent; SIGKILL after the grace period
    bool kill_sent = false;
  };
  // The supervisor: one pass over the workers each tick; at once again
  // after a pass that changed something, or when poked.
  class Supervisor final : public core::Controller {
   public:
    explicit Supervisor(LocalProcessPool& pool) : pool_(pool) {}
    std::string controller_name() const override { return "local pool " + pool_.options_.id_prefix; }
    std::int64_t next_tick_us() const override { return poked_ ? kNow : next_us_.load(); }
    void tick(std::int64_t now_us) override;
    void poke();  // any thread: tick at once

   private:
    static constexpr std::int64_t kNow = std::numeric_limits<std::int64_t>::min();
    LocalProcessPool& pool_;
    std::atomic<std::int64_t> next_us_{kNow};
    std::atomic<bool> poked_{false};
  };
  // One pass, its changes delivered (outside mu_); true when a state changed.
  bool supervise();
  // One pass over the workers (under mu_); state changes go to `changed`.
  void tick(std::vector<manager::WorkerInfo>& changed);
  void set_state(Worker& w, manager::WorkerState s, std::vector<manager::WorkerInfo>& changed,
                 const std::string& failure = "");
  void terminate(Worker& w);  // SIGTERM now, SIGKILL after the grace period (tick)
  Worker* find(const std::string& id);
  // Pings (inference port) then checks the models (management port) until both pass: "" then, else why not.
  std::string start_check(const torchserve::WorkerEndpoint& endpoint, std::int64_t deadline_us,
                          std::shared_ptr<CheckCancel> cancel) const;
  int pick_port();  // the launcher's, in this pool's class (port_modulus, port_residue)

  net::HttpTransport& client_;
  const core::Clock& clock_;
  ProcessLauncher& launcher_;
  LocalProcessPoolOptions options_;
  std::mutex mu_;
  bool stopping_ = false;
  int next_id_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  manager::DrainHook drain_hook_;
  manager::WorkerStateNotices notices_;  // state changes to the handler, in order, never under mu_
  Supervisor supervisor_{*this};
  std::unique_ptr<core::ControlLoop> own_loop_;  // last: when given no loop; started once all above exists
};

// The command with every {port} / {management_port} replaced.
std::string expand_command(const std::string& command_template, int port, int management_port);

}  // namespace lull::pools
