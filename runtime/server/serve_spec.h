#pragma once
// Everything `lull serve` is asked to do, in one place: what the Server
// (server.h) builds and runs. The CLI turns flags into a ServeSpec and
// checks them (cli/serve_command.cc); the Server trusts it.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/pools/kubernetes_pool.h"
#include "runtime/pools/local_process_pool.h"
#include "runtime/pools/serving_autoscaler.h"
#include "runtime/manager/variant_switcher.h"
#include "runtime/core/fleet_tables.h"
#include "runtime/core/model_control.h"
#include "runtime/net/http_transport.h"
#include "runtime/core/policy_loader.h"
#include "runtime/core/policy_provider.h"
#include "runtime/core/policy_table.h"
#include "runtime/session/drift_recompiler.h"
#include "runtime/frontend/frontend.h"
#include "runtime/session/serve_session.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"
#include "schema/policy.pb.h"

namespace lull::server {

// --autoscale: a worker pool instead of fixed servers.
struct AutoscaleSpec {
  bool enabled = false;
  std::string pool = "local";  // local | kubernetes
  pools::LocalProcessPoolOptions local;
  pools::KubernetesPoolOptions kubernetes;
  pools::ServingAutoscalerOptions scaler;      // its log, refresh and pool metrics are the server's
  std::int64_t start_timeout_us = 61'000'000;  // the initial workers' wait
  std::string log_path;  // every autoscaler line also goes here (appended; '' or '-': stderr only)
};

// --variant-sets: fewer models at high load (manager/variant_controller.h).
struct VariantSpec {
  std::vector<manager::ModelVariant> variants;  // [0] the full set; empty: off
  manager::VariantSwitchOptions switching;
  std::int64_t interval_us = 200'000;
  std::string load = "current:5";  // the load forecaster (load_forecast.h)
  std::int64_t drain_timeout_ms = 30'000;
  std::string archive = "{model}.mar";
  bool enabled() const { return !variants.empty(); }
};

// --recompile-on-drift (serve/drift_recompiler.h).
struct DriftSpec {
  std::string out_path;          // empty: off
  schema::PolicyLibrary served;  // the --policies file (DriftRecompiler::served_sets: what is recompiled)
  session::DriftRecompiler::Recompile recompile;
  session::DriftRecompiler::Write write;
  // The recompiled set as served (a shard's view: runtime/core/shard.h); unset: as is.
  std::function<core::PolicyTable(const core::PolicyTable&)> view;
  // After each recompiled set is swapped in (online compilation takes its latencies).
  std::function<void(const schema::PolicySet&)> on_recompiled;
};

// A mixed fleet (docs/operators-guide.md "Serving"): each (class, kind) group is
// served as one system over its own servers, behind one front end
// (serve/fleet_service.h).
struct FleetGroupSpec {
  core::PolicyTable table;                          // the kind's set for its worker count
  std::vector<core::PolicyTable> library;           // the kind's whole library (empty: `table` alone)
  std::vector<torchserve::WorkerEndpoint> servers;  // fixed servers (not with autoscale)
  DriftSpec drift;                                  // --recompile-on-drift for this kind alone (out_path empty: off)
  // --autoscale: the group's own local pool (its kind's command) and
  // autoscaler (its class's violation target, from the kind's count).
  AutoscaleSpec autoscale;
};

struct FleetSpec {
  core::FleetTables tables;
  std::vector<std::vector<FleetGroupSpec>> groups;  // [class][kind], as `tables`
  std::uint64_t seed = 1;                           // the kind draws
  bool enabled() const { return !tables.classes.empty(); }
};

struct ServeSpec {
  std::string policies;  // the file; SIGHUP reads it again (Server::reload)
  // How a library file is read (SIGHUP too); unset: load_policy_library. A
  // shard serves the file as seen at its share of the load (runtime/core/shard.h).
  std::function<std::vector<core::PolicyTable>()> load_library;
  core::PolicyExpectations expect;  // what a reloaded single set must match
  core::PolicyTable table;          // the policies served at start (a library's first set)
  // The session's options: the library (empty: `table` alone), reject_late;
  // the server adds its hooks.
  session::ServeOptions session;
  std::vector<torchserve::WorkerEndpoint> servers;  // fixed servers (not with autoscale)
  frontend::FrontendOptions frontend;
  torchserve::TorchServeOptions backend;
  std::string management_key;  // TorchServe's management key (model check, pools, variants)
  // The management key of the server at a management URL as its key file
  // has it now, for the model check and the variant switch's model loads
  // (ModelManagementOptions::server_key_source); unset: management_key.
  std::function<std::string(const std::string& management_url, bool refused)> management_key_source;
  bool model_check = true, strict_model_batching = false;
  // --wait-for-servers-s: 0 checks fixed servers once at start (an error
  // when one fails). Else the front end binds first and answers "not ready"
  // (runtime/frontend/readiness_gate.h) while the model check and the first
  // ping are retried every wait_retry_us, until they pass or this long has
  // gone by (then an error); --autoscale: while the pool's first workers
  // start, for the longer of this and autoscale.start_timeout_us.
  std::int64_t wait_for_servers_us = 0;
  std::int64_t wait_retry_us = 250'000;
  // With a wait: called with the bound port once the front end listens, before it is ready.
  std::function<void(int port)> on_listening;
  // Another protocol than TorchServe's (cli/serve_backend.h: --backend v2;
  // backend.wire speaks it, autoscale.local.check checks a pool's new
  // worker): the start-up model check of the fixed servers (throws
  // serve::ModelCheckError) and the model loads and unloads of
  // --variant-sets. Unset: TorchServe's management API.
  std::function<void(net::HttpTransport&, const std::vector<torchserve::WorkerEndpoint>&,
                     const std::vector<std::string>& models)>
      check_models;
  std::function<std::unique_ptr<core::ModelControl>(net::HttpTransport&)> model_control;
  std::string health_probe = "GET /ping";  // the backend's health probe, named when no worker passes it
  // Makes each HTTP client the server uses towards model servers and APIs
  // (backends, the start-up model check, pools, the management API); unset:
  // libcurl's net::HttpClient. Tests hand in fakes (test/support/fake_http_transport.h).
  std::function<std::unique_ptr<net::HttpTransport>()> transport;
  core::PolicyCompiler* online = nullptr;  // online compilation (nullptr: off); outlives the server
  AutoscaleSpec autoscale;
  VariantSpec variants;
  DriftSpec drift;
  // A fleet instead of one system: `table` is then its first group's (the
  // task and the models), and `servers`, `session.library`, `drift`,
  // `online`, `variants` and `autoscale` (but its log_path) are unused.
  FleetSpec fleet;
};

}  // namespace lull::server
