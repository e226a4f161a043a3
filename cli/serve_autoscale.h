#pragma once
// `lull serve --autoscale`: the worker pool (model-server processes on this
// machine, or a Kubernetes Deployment) and the ServingAutoscaler, built from
// the command line and wired to the serve stack. Kept out of
// serve_command.cc (the composition root) so that it stays small: it asks
// this file for the slots, the session's hooks, and to start.
#include <boost/program_options.hpp>

#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cli/autoscale_flags.h"
#include "runtime/clock.h"
#include "runtime/manager/serving_autoscaler.h"
#include "runtime/manager/session_slots.h"
#include "runtime/manager/worker_pool.h"
#include "runtime/policy_table.h"
#include "runtime/net/http_client.h"
#include "runtime/serve/serve_session.h"
#include "runtime/torchserve/torchserve_backend.h"

namespace lull::cli {

struct ServeAutoscaleFlags {
  AutoscaleFlags autoscale;  // --autoscale and the controller's options (shared with lull simulate)
  std::string pool = "local";
  std::string command, log_dir;
  double start_timeout_s = 60, drain_timeout_s = 30, stop_grace_s = 5;
  int initial_workers = 0;
  double retry_base_s = 1, retry_max_s = 30;
  std::string k8s_server, k8s_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token",
                          k8s_ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                          k8s_namespace = "default", k8s_deployment, k8s_service, k8s_port_name = "http",
                          k8s_management_port_name = "management";
  double k8s_not_ready_timeout_s = 300, k8s_call_budget_s = 5;
  // The local pool's check of a new worker (LocalProcessPoolOptions::check);
  // empty: TorchServe's. Set by lull serve for --backend v2, not a flag.
  std::function<std::string(serve::HttpTransport&, const serve::WorkerEndpoint&, std::int64_t)> worker_check;
};

void add_serve_autoscale_options(boost::program_options::options_description& desc, ServeAutoscaleFlags& flags);

class ServeAutoscale {
 public:
  // Checks the flags (UsageError naming the flag) and builds the pool and
  // the controller; starts nothing. `models`: the model check every new
  // worker must pass (empty: the health check only).
  ServeAutoscale(const ServeAutoscaleFlags& flags, const std::vector<runtime::PolicyTable>& library,
                 std::vector<std::string> models, const std::string& management_key);
  ~ServeAutoscale();

  // The worker slots the backend and session must have (all vacant at first).
  int slots() const { return scaler_->slots(); }
  // The session's part: slots join only through the pool; arrivals feed the
  // autoscaler; /metrics gains the autoscaler's families.
  void configure(serve::ServeOptions& options);
  // Plugs the pool into the stack, starts the initial workers (an error when
  // none comes up) and the manager thread. Returns the workers up. After
  // interrupt() (any thread, e.g. on SIGTERM) it returns at once, and the
  // manager thread does not run.
  int start(serve::TorchServeBackend& backend, serve::ServeSession& session);
  void interrupt();
  // Model variants (--variant-sets): the workers in rotation, and the
  // library whose capacities decide from the next tick (ServingAutoscaler).
  std::vector<std::string> management_urls_up() { return scaler_->management_urls_up(); }
  void use_library(const std::vector<runtime::PolicyTable>& library) { scaler_->use_library(library); }
  // Ends the manager thread, unplugs the pool from the stack and stops its
  // workers. Call it before the session goes (the pool's threads call into
  // it); /metrics must not be asked afterwards.
  void stop();

 private:
  void log(const std::string& line);

  ServeAutoscaleFlags flags_;
  runtime::WallClock clock_;
  serve::HttpClient client_;  // the pool's health/model checks and API calls
  std::unique_ptr<manager::WorkerPool> pool_;
  std::unique_ptr<manager::SessionSlots> slots_;  // start()'s; outlives the autoscaler's use of it
  std::unique_ptr<manager::ServingAutoscaler> scaler_;  // declared after the pool: stopped before it goes
  std::mutex log_mu_;
  std::ofstream log_file_;
};

}  // namespace lull::cli
