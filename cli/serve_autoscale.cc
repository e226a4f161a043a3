// The flags of `lull serve --autoscale` (why: see serve_autoscale.h).
#include "cli/serve_autoscale.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "schema/input_limits.h"

namespace lull::cli {
namespace po = boost::program_options;

namespace {
std::int64_t ms(double s) { return static_cast<std::int64_t>(std::llround(s * 1e3)); }
}  // namespace

void add_serve_autoscale_options(po::options_description& desc, ServeAutoscaleFlags& f) {
  add_autoscale_options(desc, f.autoscale);
  // clang-format off
  desc.add_options()
      ("worker-pool", po::value(&f.pool)->default_value(f.pool),
       "--autoscale: who runs the workers: local (model-server processes on this machine, --worker-command) | "
       "kubernetes (a Deployment's replicas, --k8s-*)")
      ("worker-command", po::value(&f.command),
       "local pool: the model server's command, {port} (and {management_port}) replaced by ports lull picks, "
       "e.g. 'python3 test/modelserver/lull_modelserver.py --replay-profile P.json --port {port}'")
      ("worker-log-dir", po::value(&f.log_dir),
       "local pool: each worker's output goes to DIR/ID.log (default: a new /tmp dir; shard I's IDs are local-I-N)")
      ("initial-workers", po::value(&f.initial_workers)->default_value(0),
       "workers started before serving (0: the autoscaler's floor)")
      ("worker-start-timeout-s", po::value(&f.start_timeout_s)->default_value(f.start_timeout_s),
       "local pool: a worker not passing its health and model checks within this is failed and stopped")
      ("drain-timeout-s", po::value(&f.drain_timeout_s)->default_value(f.drain_timeout_s),
       "local pool: a draining worker is stopped after this even if its batch has not finished")
      ("worker-stop-grace-s", po::value(&f.stop_grace_s)->default_value(f.stop_grace_s),
       "local pool: SIGTERM, then SIGKILL after this")
      ("autoscale-retry-s", po::value(&f.retry_base_s)->default_value(f.retry_base_s),
       "after a worker fails to start, scaling waits this long, doubled per failure in a row...")
      ("autoscale-retry-max-s", po::value(&f.retry_max_s)->default_value(f.retry_max_s), "...up to this")
      ("k8s-api-server", po::value(&f.k8s_server),
       "kubernetes pool: https://HOST:PORT of the API server (in a pod: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
      ("k8s-token-file", po::value(&f.k8s_token_file)->default_value(f.k8s_token_file), "bearer token file")
      ("k8s-ca-file", po::value(&f.k8s_ca_file)->default_value(f.k8s_ca_file), "CA certificate file ('' : the system CAs)")
      ("k8s-namespace", po::value(&f.k8s_namespace)->default_value(f.k8s_namespace), "namespace")
      ("k8s-deployment", po::value(&f.k8s_deployment),
       "the model servers' Deployment (scaled through /scale); with --shard I/G a name with {shard}, replaced by I "
       "(each shard scales its own); with a fleet, {class} and {kind}, replaced by each group's (each group scales its own)")
      ("k8s-service", po::value(&f.k8s_service),
       "the Service whose EndpointSlices list the workers; with --shard ({shard}) or a fleet ({class}, {kind}) as the Deployment")
      ("k8s-port-name", po::value(&f.k8s_port_name)->default_value(f.k8s_port_name), "the Service port of the inference API")
      ("k8s-management-port-name", po::value(&f.k8s_management_port_name)->default_value(f.k8s_management_port_name),
       "its management port (absent from the Service: the inference port)")
      ("k8s-not-ready-timeout-s", po::value(&f.k8s_not_ready_timeout_s)->default_value(f.k8s_not_ready_timeout_s),
       "kubernetes pool: a pod whose endpoint stays not ready this long (CrashLoopBackOff) is failed and scaled "
       "away, and replaced if the load needs it (0: never)")
      ("k8s-call-budget-s", po::value(&f.k8s_call_budget_s)->default_value(f.k8s_call_budget_s),
       "kubernetes pool: the most one pool call (a refresh, a scale-out) may take, its API attempts and backoff "
       "waits together, so a hanging API server does not stall the autoscaler");
  // clang-format on
}

server::AutoscaleSpec autoscale_spec(const ServeAutoscaleFlags& flags, std::vector<std::string> models,
                                     const std::string& management_key, bool command_required) {
  const sim::SimAutoscale config = autoscale_config(flags.autoscale, 1);
  check_range("--initial-workers", flags.initial_workers, 0, limits::kMaxWorkers);
  check_positive_range("--worker-start-timeout-s", flags.start_timeout_s, 3600);
  check_range("--drain-timeout-s", flags.drain_timeout_s, 0, 3600);
  check_range("--worker-stop-grace-s", flags.stop_grace_s, 0, 3600);
  check_positive_range("--autoscale-retry-s", flags.retry_base_s, 3600);
  check_range("--autoscale-retry-max-s", flags.retry_max_s, flags.retry_base_s, 86400);
  server::AutoscaleSpec spec;
  spec.enabled = true;
  spec.pool = flags.pool;
  spec.log_path = flags.autoscale.log;
  if (flags.pool == "local") {
    if (flags.command.empty() && command_required) throw UsageError("--worker-pool local needs --worker-command");
    if (!flags.log_dir.empty()) {
      std::error_code ec;
      if (!std::filesystem::is_directory(flags.log_dir, ec))
        throw UsageError("--worker-log-dir " + flags.log_dir + ": no such directory");
      if (access(flags.log_dir.c_str(), W_OK | X_OK) != 0)
        throw UsageError("--worker-log-dir " + flags.log_dir + ": not writable");
    }
    pools::LocalProcessPoolOptions& o = spec.local;
    o.command = flags.command;
    o.models = std::move(models);
    o.management_key = management_key;
    o.log_dir = flags.log_dir;
    o.start_timeout_ms = ms(flags.start_timeout_s);
    o.drain_timeout_ms = ms(flags.drain_timeout_s);
    o.stop_grace_ms = ms(flags.stop_grace_s);
  } else if (flags.pool == "kubernetes") {
    if (flags.k8s_server.empty() || flags.k8s_deployment.empty() || flags.k8s_service.empty())
      throw UsageError("--worker-pool kubernetes needs --k8s-api-server, --k8s-deployment and --k8s-service");
    pools::KubernetesPoolOptions& o = spec.kubernetes;
    o.api.server = flags.k8s_server;
    o.api.token_file = flags.k8s_token_file;
    o.api.ca_file = flags.k8s_ca_file;
    o.ns = flags.k8s_namespace;
    o.deployment = flags.k8s_deployment;
    o.service = flags.k8s_service;
    o.port_name = flags.k8s_port_name;
    o.management_port_name = flags.k8s_management_port_name;
    check_range("--k8s-not-ready-timeout-s", flags.k8s_not_ready_timeout_s, 0, 86400);
    check_positive_range("--k8s-call-budget-s", flags.k8s_call_budget_s, 3600);
    o.not_ready_timeout_us = ms(flags.k8s_not_ready_timeout_s) * 1000;
    o.api.sequence_budget_ms = ms(flags.k8s_call_budget_s);
  } else {
    throw UsageError("--worker-pool: expected local or kubernetes (got '" + flags.pool + "')");
  }
  pools::ServingAutoscalerOptions& o = spec.scaler;
  o.autoscale = config.options;
  o.target = config.target;
  o.initial_workers = flags.initial_workers;
  o.retry_base_us = ms(flags.retry_base_s) * 1000;
  o.retry_max_us = ms(flags.retry_max_s) * 1000;
  spec.start_timeout_us = ms(flags.start_timeout_s) * 1000 + 1'000'000;
  return spec;
}

}  // namespace lull::cli
