#pragma once
// `lull serve` as one object (after Triton's InferenceServer: Init, Stop).
// It owns every part, built in its constructor from a ServeSpec and
// declared in the order they are built: the online policy provider, the
// worker pool and its autoscaler (--autoscale), the drift recompiler, the
// backend and the session, the variant switch, the one ControlLoop that
// ticks the controllers (autoscaler, variant switch, drift recompiler), and
// the front end. start() brings them up in that order; stop() takes them
// down in the one order that is safe (the front end and the session stop
// taking queries; the controllers end; the pool, whose threads call into
// the session, stops its workers; the backend's threads end), and the
// destructor calls it, so no caller needs destructor-order guards.
// A fleet (spec.fleet, docs/operators-guide.md) is one backend, session and drift
// recompiler (and, with --autoscale, a worker pool and its autoscaler) per
// (class, kind) group, built and stopped the same way, with
// the front end over a FleetService that routes queries to them.
#include <atomic>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/core/background_policy_provider.h"
#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/pools/serving_autoscaler.h"
#include "runtime/pools/session_policy_swap.h"
#include "runtime/pools/session_slots.h"
#include "runtime/manager/variant_controller.h"
#include "runtime/manager/worker_pool.h"
#include "runtime/net/http_client.h"
#include "runtime/session/drift_recompiler.h"
#include "runtime/session/fleet_service.h"
#include "runtime/frontend/frontend.h"
#include "runtime/frontend/readiness_gate.h"
#include "runtime/session/serve_session.h"
#include "runtime/server/serve_spec.h"
#include "runtime/server/start_wait.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/upstream/torchserve/torchserve_model_control.h"
#include "runtime/net/interruptible_transport.h"

namespace lull::server {

// A spec the server cannot run (an autoscaler option out of range): the
// caller's usage error.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Server {
 public:
  // Builds every part; starts no worker and takes no query. Fixed servers
  // are checked to hold the policies' models (unless spec.model_check is
  // off): serve::ModelCheckError. Throws SpecError for autoscaler options
  // out of range.
  explicit Server(ServeSpec spec);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Pings the workers (fixed servers: an error when none answers), starts
  // the initial workers (--autoscale: an error when none comes up), the
  // control loop and the front end. With spec.wait_for_servers_us the front
  // end listens first, not ready (spec.on_listening), and the model check
  // and the pings are retried until they pass or the wait ends (an error).
  // Returns the workers up; after
  // interrupt() (any thread, e.g. on SIGTERM) it returns at once, without
  // starting the loop or the front end (stop() still takes down the rest).
  int start();
  void interrupt();
  bool interrupted() const { return interrupted_; }
  // SIGHUP: the policy file again, checked as at start (same task, SLO,
  // models and worker count), swapped in whole at the next arrival; a file
  // that is refused leaves the served policies as they were. One line
  // either way (stderr).
  void reload();
  // Stops serving in the safe order (see above); idempotent.
  // answers_written runs once the front end has written every answer the
  // stop gives (what a forced exit waits for), before the slower clean-up.
  void stop(const std::function<void()>& answers_written = {});

  int port() const { return frontend_ ? frontend_->port() : 0; }
  const core::PolicyTable& table() const { return spec_.table; }
  bool autoscaled() const { return spec_.autoscale.enabled; }
  const std::string& host() const { return spec_.frontend.host; }

 private:
  void autoscale_log(const std::string& line);
  void open_autoscale_log(const std::string& path);
  void interrupt_pool();
  void build_autoscaler();
  // A pool per a.pool and its autoscaler over `library`; every log line
  // prefixed with `prefix`; capacity for the pattern `pattern` says.
  void make_autoscaler(AutoscaleSpec& a, const std::vector<core::PolicyTable>& library, const std::string& prefix,
                       std::function<ArrivalProcess()> pattern, net::HttpTransport& client,
                       std::unique_ptr<manager::WorkerPool>* pool, std::unique_ptr<pools::ServingAutoscaler>* scaler);
  // Starts an autoscaler's initial workers and adds it to the loop; the
  // workers up (an error naming `what` when none came up, unless interrupted).
  int start_autoscaler(pools::ServingAutoscaler& scaler, manager::WorkerPool& pool, const std::string& what);
  void start_variants();
  // A new HTTP client: spec.transport's, else libcurl's.
  std::unique_ptr<net::HttpTransport> make_transport() const;
  // spec_.backend, with the model check of a worker rejoining rotation
  // (unless spec_.model_check is off or another protocol's check replaces TorchServe's).
  torchserve::TorchServeOptions backend_options() const;
  // The fixed servers' model check (unless spec.model_check is off).
  void check_servers(const std::vector<torchserve::WorkerEndpoint>& servers);
  // --wait-for-servers-s: the front end listens, over the gate, before the servers answer.
  void listen_early();
  // The front end serves `service` from here on (bound now unless it listens already).
  void open_frontend(frontend::QueryService& service);
  // A fleet: every group's backend and session, the service over them.
  void build_fleet();
  int start_fleet();

  ServeSpec spec_;
  std::vector<std::string> model_names_;
  core::WallClock clock_;
  std::unique_ptr<core::BackgroundPolicyProvider> provider_;
  // --autoscale
  std::unique_ptr<net::HttpTransport> pool_client_;  // the pool's health/model checks and API calls
  std::mutex log_mu_;
  std::ofstream log_file_;
  std::unique_ptr<manager::WorkerPool> pool_;
  std::unique_ptr<pools::ServingAutoscaler> scaler_;
  // --variant-sets
  std::unique_ptr<net::HttpTransport> variant_client_;          // the management API
  std::unique_ptr<net::InterruptibleTransport> variant_calls_;  // over it: a stop cancels a load in progress
  std::unique_ptr<core::ModelControl> model_control_;           // TorchServe's management API, or spec.model_control's
  // --recompile-on-drift
  std::unique_ptr<session::DriftRecompiler> recompiler_;
  std::unique_ptr<torchserve::TorchServeBackend> backend_;
  std::unique_ptr<session::ServeSession> session_;
  std::unique_ptr<pools::SessionSlots> slots_;  // the autoscaler's
  std::unique_ptr<pools::SessionPolicySwap> swap_;
  std::mutex switcher_mu_;  // /metrics reads the switcher start() makes
  std::unique_ptr<manager::VariantSwitcher> switcher_;
  std::atomic<manager::VariantController*> variant_controller_{nullptr};
  std::unique_ptr<manager::VariantController> variant_controller_owned_;
  // A fleet: one group per (class, kind), each as one system's parts.
  // reload() for a fleet: the file again, refused whole unless its classes
  // and kinds are the served ones (runtime/core/fleet_tables.h), else each
  // group's sets and then the splits swapped in.
  void reload_fleet();
  struct FleetGroup {
    std::string name;  // "class 'a', kind 'b'"
    // --autoscale: the group's pool and autoscaler (its own client: pools run their own threads)
    std::unique_ptr<net::HttpTransport> pool_client;
    std::unique_ptr<manager::WorkerPool> pool;
    std::unique_ptr<pools::ServingAutoscaler> scaler;
    std::unique_ptr<session::DriftRecompiler> recompiler;
    std::unique_ptr<torchserve::TorchServeBackend> backend;
    std::unique_ptr<session::ServeSession> session;
    std::unique_ptr<pools::SessionSlots> slots;  // the autoscaler's
  };
  std::vector<std::unique_ptr<FleetGroup>> groups_;
  std::unique_ptr<session::FleetService> fleet_;
  core::ControlLoop loop_;
  frontend::ReadinessGate gate_;  // what the front end serves: "not ready" until open_frontend
  StartWait wait_;                // --wait-for-servers-s
  std::unique_ptr<frontend::Frontend> frontend_;
  std::atomic<bool> interrupted_{false};
  bool stopped_ = false;
};

}  // namespace lull::server
