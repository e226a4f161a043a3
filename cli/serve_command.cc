// lull serve: the model-less front end in front of TorchServe-compatible
// model servers, one per worker, scheduled by a compiled policy set. Runs
// until SIGINT or SIGTERM, then answers what is still waiting and exits.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/log_flags.h"
#include "compiler/online/drift_recompile.h"
#include "cli/online_compile.h"
#include "cli/option_ranges.h"
#include "cli/output_file.h"
#include "cli/output_lock.h"
#include "cli/parse_options.h"
#include "cli/serve_autoscale.h"
#include "cli/fleet_kubernetes.h"
#include "cli/serve_fleet.h"
#include "cli/serve_shard.h"
#include "cli/serve_backend.h"
#include "cli/serve_variants.h"
#include "schema/one_line.h"
#include "runtime/log/log.h"
#include "runtime/net/service_notify.h"
#include "runtime/core/policy_loader.h"
#include "schema/input_limits.h"
#include "runtime/server/server.h"
#include "runtime/server/stop_signals.h"
#include "runtime/frontend/frontend.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "runtime/upstream/torchserve/request_split.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"
#include "runtime/upstream/v2/v2_model_check.h"
#include "schema/bounded_file.h"
#include "schema/fleet_file.h"
#include "schema/policy_file.h"

namespace lull::cli {

namespace po = boost::program_options;

namespace {

// `--help`'s examples: each runs as written from the repository root (ctest cli.help_examples).
const char* const kServeExamples =
    "  # lull started before its model server (the stand-in replaying a profile) waits for it\n"
    "  lull compile --profiles test/data/replay_profile.json --slo-ms 100 --workers 1 --load-qps 10:60:10 --out "
    "/tmp/replay.pb\n"
    "  lull serve --policies /tmp/replay.pb --servers http://127.0.0.1:8080 --wait-for-servers-s 60 &\n"
    "  python3 test/modelserver/lull_modelserver.py --replay-profile test/data/replay_profile.json --port 8080 &\n"
    "  until curl -sf http://127.0.0.1:8070/v2/health/ready; do sleep 0.5; done\n"
    "  curl -sf http://127.0.0.1:8070/predictions/image-classification -d hello\n";

// --port-file, for a script that waits for it: emptied first (a restarted lull
// must not leave the previous run's port there for the script to read),
// written atomically once the front end listens, and removed when lull exits
// by any way that unwinds (a stop, an error), if it still holds this
// process's port (or nothing): another process may have taken the file since.
class PortFile {
 public:
  explicit PortFile(std::string path) : path_(std::move(path)) {
    if (on_disk()) write_output(path_, "");
  }
  PortFile(const PortFile&) = delete;
  PortFile& operator=(const PortFile&) = delete;
  ~PortFile() {
    if (!on_disk()) return;
    try {
      const std::string now = read_bounded_file(path_, FileKind::kSettings);
      if (now == text_ || now.empty()) std::remove(path_.c_str());
    } catch (const FileReadError&) {
      // Gone, or no longer a regular file: not ours to remove.
    }
  }
  void publish(int port) {
    if (path_.empty()) return;
    text_ = std::to_string(port) + "\n";
    write_output(path_, text_);
  }

 private:
  bool on_disk() const { return !path_.empty() && !is_stdout(path_); }
  std::string path_;
  std::string text_;
};

}  // namespace

int run_serve(int argc, char** argv) {
  OnlineCompileFlags online_flags;
  std::string profiles;
  std::string fleet_servers;
  unsigned fleet_seed = 1;
  std::string policies, workers_text, management_text, listen, port_file, token_file, recompile_out, shard_text;
  server::ServeSpec spec;
  session::ServeOptions& opts = spec.session;
  torchserve::TorchServeOptions& backend_opts = spec.backend;
  frontend::FrontendOptions& fe = spec.frontend;
  ServeAutoscaleFlags autoscale_flags;
  ServeVariantsFlags variant_flags;
  LogFlags log_flags;
  ServeBackendFlags backend_flags;
  bool no_model_check = false, strict_model_batching = false;
  double wait_for_servers_s = 0;
  po::options_description desc("lull serve: serve a task through model servers under a compiled policy set");
  // clang-format off
  desc.add_options()
      ("policies", po::value(&policies)->required(), "policy set from lull compile (SET.pb)")
      ("servers", po::value(&workers_text), "model servers' inference URLs, one per worker: http://H:P,... "
       "(not with --autoscale: its worker pool starts them)")
      ("management-urls", po::value(&management_text), "their management URLs, same order (default: the inference URLs)")
      ("fleet-servers", po::value(&fleet_servers),
       "a fleet (--policies FLEET.pb from lull compile --fleet): the servers of each class and kind, a JSON file "
       "{\"CLASS\": {\"KIND\": [\"http://H:P\", ...]}}, one per worker of that kind; with --autoscale "
       "{\"CLASS\": {\"KIND\": {\"command\": \"CMD {port}\"}}}, each group's pool's server (docs/operators-guide.md)")
      ("fleet-seed", ranged_value(&fleet_seed)->default_value(1), "a fleet: the seed of the random split over kinds")
      ("shard", po::value(&shard_text),
       "I/G: serve as shard I (0-based) of G behind a round-robin balancer: own the servers j with j mod G = I, "
       "and serve the policies compiled for G times its workers at G times its load; with --autoscale its pool is "
       "its own (docs/operators-guide.md)")
      ("listen", po::value(&listen)->default_value("127.0.0.1:" + std::to_string(frontend::FrontendOptions::kDefaultPort)), "HOST:PORT of the front end (port 0: any)")
      ("port-file", po::value(&port_file), "write the bound port here once listening ('-' for stdout); emptied at start, removed at exit")
      ("max-body-bytes", ranged_value<std::size_t>(&fe.max_body_bytes, 1, limits::kMaxBodyBytes)->default_value(4 << 20),
       "larger request bodies get 413 (chunked ones too)")
      ("http-threads", po::value(&fe.io_threads)->default_value(net::default_io_threads()),
       "front-end I/O threads (event-driven: a connection or a waiting query holds none); default: the CPUs lull may "
       "run on (its affinity mask, e.g. taskset), at most 2")
      ("header-timeout-ms", po::value(&fe.header_timeout_ms)->default_value(10000),
       "a request header must be complete this long after its first byte, else the connection is closed")
      ("body-timeout-ms", po::value(&fe.body_timeout_ms)->default_value(30000),
       "a request body must be complete this long after its header (and a response written), else closed")
      ("idle-timeout-ms", po::value(&fe.idle_timeout_ms)->default_value(60000),
       "a kept-alive connection with no request for this long is closed")
      ("max-connections", po::value(&fe.max_connections)->default_value(1024),
       "open client connections; a new one beyond closes the oldest idle one (or is answered 503 when all are busy)")
      ("batch-timeout-ms", po::value(&backend_opts.batch_timeout_ms)->default_value(2000),
       "a batch slower than this fails (and counts towards ejecting its worker)")
      ("eject-after-failures", po::value(&backend_opts.outlier.eject_after_failures)->default_value(3),
       "consecutive failed batches (5xx, timeout, undecodable 200) that eject a worker")
      ("eject-base-ms", po::value(&backend_opts.outlier.base_ms)->default_value(1000),
       "first ejection's length; doubles per consecutive ejection")
      ("eject-max-ms", po::value(&backend_opts.outlier.max_ms)->default_value(30000), "longest ejection")
      ("health-interval-ms", po::value(&backend_opts.health_interval_ms)->default_value(500), "between pings")
      ("health-timeout-ms", po::value(&backend_opts.health_timeout_ms)->default_value(500), "ping timeout")
      ("wait-for-servers-s", po::value(&wait_for_servers_s)->default_value(0),
       "listen at once, not ready (/ping 500, /v2/health/ready 503, queries 503 with Retry-After; "
       "/v2/health/live 200), and retry the model check and pings until the model servers answer, for at most "
       "this long (then exit 2); 0: check them once and exit 2 if they fail. With --autoscale: listen at once "
       "while the first workers start")
      ("no-model-check", po::bool_switch(&no_model_check), "skip the model check at start (TorchServe: management API; v2: model readiness)")
      ("reject-late", po::bool_switch(&opts.reject_late),
       "the bouncer: answer 503 with Retry-After at once to a query even the fastest model cannot answer by "
       "its deadline at the current queue (default: serve it late, counted as a violation)")
      ("torchserve-token-file", po::value(&token_file),
       "TorchServe's key_file.json: its inference key goes on predictions and pings, its management key on "
       "the model check (as Authorization: Bearer KEY); read again when it changes or a key is refused. "
       "{port} and {host} in the path stand for each server's inference port and host: a file per server, "
       "as each TorchServe instance writes its own keys")
      ("max-request-bytes", po::value(&backend_opts.max_request_bytes)->default_value(torchserve::kTorchServeMaxRequestBytes),
       "largest request body sent to a model server (TorchServe's max_request_size); larger batches go as "
       "several requests")
      ("strict-model-batching", po::bool_switch(&strict_model_batching),
       "fail (not warn) at start when a model's batchSize > 1 with maxBatchDelay > 0 would hold lull's batches")
      ("recompile-on-drift", po::value(&recompile_out),
       "on latency drift, compile a policy set from the observed latencies and write it to this file");
  // clang-format on
  add_serve_backend_options(desc, backend_flags);
  // clang-format off
  desc.add_options()("profiles", po::value(&profiles), "online compilation: the profiles the policies were compiled from");
  // clang-format on
  add_online_compile_options(desc, online_flags);
  po::options_description autoscale_desc("Autoscaling (--autoscale: a worker pool instead of --servers)");
  add_serve_autoscale_options(autoscale_desc, autoscale_flags);
  desc.add(autoscale_desc);
  po::options_description variants_desc("Model variants (--variant-sets: fewer models at high load)");
  add_serve_variants_options(variants_desc, variant_flags);
  desc.add(variants_desc);
  po::options_description log_desc("Logging");
  add_log_options(log_desc, log_flags);
  desc.add(log_desc);
  const char* usage =
      "usage: lull serve --policies SET.pb --servers URL,URL,... --listen 127.0.0.1:8070\n"
      "       lull serve --policies LIBRARY.pb --autoscale --worker-command 'CMD --port {port}' [options]";
  const std::vector<RenamedFlag> renamed = {
      {"--workers", "--workers is now --servers URL,URL (the model servers; --workers is a count in lull)"}};
  po::variables_map vm;
  if (!parse_command_line(argc, argv, desc, usage, {nullptr, renamed, &vm, "LULL_SERVE_", kServeExamples})) return 0;
  apply_log_flags(log_flags);
  PortFile port_out(port_file);
  check_range("--http-threads", fe.io_threads, 1, limits::kMaxThreads);
  check_range("--header-timeout-ms", fe.header_timeout_ms, 1, limits::kMaxIntervalMs);
  check_range("--body-timeout-ms", fe.body_timeout_ms, 1, limits::kMaxIntervalMs);
  check_range("--idle-timeout-ms", fe.idle_timeout_ms, 1, limits::kMaxIntervalMs);
  check_range("--max-connections", fe.max_connections, 1, limits::kMaxConnections);
  check_range("--health-interval-ms", static_cast<double>(backend_opts.health_interval_ms),
              limits::kMinHealthIntervalMs, limits::kMaxIntervalMs);
  check_range("--health-timeout-ms", static_cast<double>(backend_opts.health_timeout_ms), 1, limits::kMaxIntervalMs);
  check_range("--batch-timeout-ms", static_cast<double>(backend_opts.batch_timeout_ms), 1, limits::kMaxIntervalMs);
  check_range("--wait-for-servers-s", wait_for_servers_s, 0, limits::kMaxIntervalMs / 1000);
  const ServeBackend protocol(backend_flags);
  backend_opts.wire = protocol.wire();
  const bool autoscale = autoscale_flags.autoscale.enabled;
  const bool fleet = is_fleet_policy_file(policies);
  if (fleet) {
    // One line for each mode a fleet does not take yet, rather than half of it.
    const auto refuse = [](bool asked, const std::string& flag) {
      if (asked) throw UsageError(flag + ": not with a fleet policy file yet (docs/operators-guide.md \"Serving\")");
    };
    refuse(!workers_text.empty() || !management_text.empty(),
           "--servers/--management-urls (a fleet takes --fleet-servers)");
    if (autoscale && autoscale_flags.initial_workers != 0)
      throw UsageError("--initial-workers: not with a fleet (each group starts at its count in the fleet file)");
    if (autoscale && vm.count("max-violation") && !vm["max-violation"].defaulted())
      throw UsageError("--max-violation: not with a fleet (each class's groups are sized by its own max_violation)");
    refuse(!variant_flags.sets.empty(), "--variant-sets");
    refuse(!shard_text.empty(), "--shard");
    refuse(online_compile_enabled(online_flags, profiles), "online compilation (--profiles)");
    if (fleet_servers.empty()) throw UsageError("--fleet-servers is required with a fleet policy file " + policies);
  } else if (!fleet_servers.empty()) {
    throw UsageError("--fleet-servers: --policies " + policies + " is not a fleet policy file");
  }
  if (!fleet && autoscale == !workers_text.empty())
    throw UsageError(autoscale ? "--servers with --autoscale: the worker pool starts the model servers"
                               : "--servers is required (or --autoscale with a worker pool)");
  const ServeShard shard(shard_text);
  std::vector<torchserve::WorkerEndpoint> workers;
  torchserve::TorchServeKeys keys;
  // Read again when they change or a key is refused; one per server with {port}.
  std::unique_ptr<torchserve::TorchServeKeyFiles> key_file;
  try {
    if (!token_file.empty()) {
      key_file = std::make_unique<torchserve::TorchServeKeyFiles>(
          token_file, [](const std::string& line) { log::info("%s", line.c_str()); });
      if (!key_file->per_server()) keys = key_file->of("")->keys();
      backend_opts.key_file = key_file.get();
    }
    if (!autoscale && !fleet) {  // a pool's workers are the shard's own already; a fleet has --fleet-servers
      workers = torchserve::parse_worker_endpoints(workers_text, management_text);
      shard.keep_own(workers);
      if (key_file)
        for (const auto& w : workers) key_file->add(w);  // each server's file readable at start
    }
    // Every query the front end accepts must fit in one request on its own.
    const auto one_query = torchserve::encoded_batch_request_size({static_cast<size_t>(fe.max_body_bytes)}) +
                           (protocol.wire() ? protocol.wire()->envelope_bytes() : 0);
    if (one_query > backend_opts.max_request_bytes)
      throw std::invalid_argument("--max-body-bytes " + std::to_string(fe.max_body_bytes) +
                                  ": one such query encodes to " + std::to_string(one_query) +
                                  " bytes, over --max-request-bytes " + std::to_string(backend_opts.max_request_bytes) +
                                  "; lower --max-body-bytes");
    frontend::parse_listen_address(listen, &fe.host, &fe.port);
    const torchserve::OutlierDetector check_eject_flags(backend_opts.outlier);  // throws on bad --eject-* values
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool online = online_compile_enabled(online_flags, profiles);
  core::PolicyExpectations expect;
  expect.workers = static_cast<int>(workers.size());
  // A library, or online compilation: the Dispatcher picks by the workers up;
  // one set without it must match the servers, as before.
  // A shard serves the library as seen at its share of the load.
  const auto load_library = [&shard, policies, n = static_cast<int>(workers.size())] {
    return shard.view(core::load_policy_library(policies, {}), n);
  };
  if (fleet) {
    spec.fleet = fleet_spec(policies, fleet_servers, recompile_out, fleet_seed, autoscale);
  } else {
    opts.library = load_library();
    if (shard.enabled()) spec.load_library = load_library;  // SIGHUP
    if (opts.library.size() == 1 && !online && !autoscale && !shard.enabled()) opts.library.clear();
  }
  const core::PolicyTable table = fleet                  ? spec.fleet.groups.front().front().table
                                  : opts.library.empty() ? core::load_policy_table(policies, expect)
                                                         : opts.library.front();
  spec.policies = policies;
  spec.expect = expect;
  spec.table = table;
  spec.servers = workers;
  spec.management_key = keys.management;
  if (key_file)  // TorchServe rotates its keys: variant loads use the file's key of the moment
    spec.management_key_source = [k = key_file.get()](const std::string& url, bool refused) {
      if (refused) k->refresh_if_changed("a management key was refused");
      torchserve::TorchServeKeyFile* file = k->of(url);
      return file ? file->keys().management : std::string();
    };
  spec.model_check = !no_model_check;
  spec.wait_for_servers_us = static_cast<std::int64_t>(wait_for_servers_s * 1e6);
  spec.on_listening = [&port_out](int port) {  // not ready yet: a script polls /v2/health/ready there
    port_out.publish(port);
    net::notify_service_manager("STATUS=listening on port " + std::to_string(port) + ", waiting for the model servers");
  };
  spec.strict_model_batching = strict_model_batching;
  // Before any thread starts (the online provider's is the first), so that
  // every thread inherits the blocked mask and only the watcher gets them.
  server::StopSignals stop_signals;
  std::unique_ptr<CompilerPolicySource> source;
  std::unique_ptr<core::PolicyCompiler> shard_source;  // the shard's view of `source`
  if (online) {
    source = std::make_unique<CompilerPolicySource>(policies, profiles, online_flags);
    shard_source = shard.online(*source, core::load_policy_library(policies, {}));
    spec.online = shard_source ? shard_source.get() : source.get();
  }
  std::vector<std::string> model_names;
  for (const auto& m : table.models) model_names.push_back(m.name);
  if (autoscale) {  // every worker passes the model check when its pool starts it
    spec.autoscale = autoscale_spec(autoscale_flags, no_model_check ? std::vector<std::string>{} : model_names,
                                    keys.management, /*command_required=*/!fleet);
    if (key_file && key_file->per_server())  // each new worker's own file, once it has written it
      spec.autoscale.local.keys_for = [k = key_file.get()](const torchserve::WorkerEndpoint& w) {
        k->refresh_if_changed("a new worker");
        torchserve::TorchServeKeyFile* file = k->of(w.inference_url);
        return file ? file->keys() : torchserve::TorchServeKeys{};
      };
    if (protocol.v2())
      spec.autoscale.local.check = [&protocol, models = spec.autoscale.local.models](
                                       net::HttpTransport& client, const torchserve::WorkerEndpoint& w,
                                       std::int64_t timeout_ms) {
        return protocol.check_worker(client, w, models, timeout_ms);
      };
  }
  if (autoscale) shard.configure_pool(spec.autoscale);
  if (autoscale && !fleet && spec.autoscale.pool == "kubernetes") refuse_group_marks(spec.autoscale.kubernetes);
  if (fleet && autoscale) fleet_autoscale(spec.fleet, spec.autoscale);  // each group's pool, from the flags'
  if (protocol.v2()) {                                                  // the protocol outlives the server
    spec.health_probe = "GET /v2/models/{model}/ready";
    spec.check_models = [&protocol](net::HttpTransport& client, const std::vector<torchserve::WorkerEndpoint>& servers,
                                    const std::vector<std::string>& models) {
      std::map<std::string, std::string> declared;
      v2::check_v2_models_ready(client, servers, models, protocol.check_options(&declared));
      protocol.learn(declared);  // each model's one declared input, unless --v2-input-name names one for all
    };
    spec.model_control = [&protocol](net::HttpTransport& client) { return protocol.v2_model_control(client); };
  }
  if (!variant_flags.sets.empty()) {
    // Online compilation and drift recompilation make policies for the full
    // set only; a variant's models would not be what they pick.
    if (online || !recompile_out.empty())
      throw UsageError("--variant-sets: not with online compilation or --recompile-on-drift");
    if (autoscale && autoscale_flags.pool != "local")
      throw UsageError(
          "--variant-sets with --autoscale: only with --worker-pool local (its model check makes sure a new "
          "worker holds every model of --policies before it joins; the Kubernetes pool checks health only)");
    if (autoscale && no_model_check)
      throw UsageError(
          "--variant-sets with --autoscale: not with --no-model-check (a new worker must be checked to "
          "hold every model of --policies before it joins)");
    // A shard's variants: each as the file has it, then its shard view.
    const std::vector<core::PolicyTable> full = shard.enabled()        ? core::load_policy_library(policies, {})
                                                : opts.library.empty() ? std::vector<core::PolicyTable>{table}
                                                                       : opts.library;
    spec.variants = variant_spec(variant_flags, full, policies);
    spec.variants.variants = shard.variants(std::move(spec.variants.variants), static_cast<int>(workers.size()));
  }
  if (!recompile_out.empty() && !fleet) {  // a fleet's: each kind's (fleet_spec)
    check_binary_output(recompile_out, "--recompile-on-drift");
    spec.drift.out_path = recompile_out;
    spec.drift.served = read_policy_library(policies);
    shard.configure_drift(spec.drift);
    spec.drift.recompile = compiler::recompile_with_latencies;
    spec.drift.write = [recompile_out](const std::string& bytes) {
      write_binary_output(recompile_out, bytes, "--recompile-on-drift");
    };
    if (source)  // online compilation from the observed latencies too
      spec.drift.on_recompiled = [src = source.get()](const schema::PolicySet& set) {
        src->use_profiles(compiler::profiles_of(set));
      };
  }
  if (key_file)
    opts.extra_metrics = [before = opts.extra_metrics, k = key_file.get()] {
      return (before ? before() : std::string()) + k->metrics_text();
    };
  shard.configure(opts);
  const std::string fleet_line = fleet ? describe_fleet(spec.fleet) : "";
  // One process per drift output, held until this returns (shards on one host must not share it).
  const auto drift_lock =
      recompile_out.empty() ? nullptr : std::make_unique<OutputLock>(recompile_out, "--recompile-on-drift");
  std::unique_ptr<server::Server> server;
  try {
    server = std::make_unique<server::Server>(std::move(spec));
  } catch (const server::SpecError& e) {
    throw UsageError(e.what());
  }
  // A stop signal while the first workers start ends their wait at once.
  const auto interrupt_start = stop_signals.subscribe([s = server.get()] { s->interrupt(); });
  // A second stop signal exits at once, but not before the answers the stop
  // gives every accepted query are written (Server::stop).
  auto answers_written = stop_signals.hold_forced_exit();
  const int workers_up = server->start();
  if (const int sig = stop_signals.received()) {
    log::info("stopping during start-up (signal %d)", sig);
    return 0;
  }
  port_out.publish(server->port());
  if (fleet) log::info("fleet: %s (class header X-Lull-Class)", fleet_line.c_str());
  log::info("task '%s', %d workers%s%s, %zu models, SLO %g ms, on http://%s:%d/predictions/%s", table.task.c_str(),
            workers_up, autoscale ? " (autoscaled)" : "", shard.describe(workers_up).c_str(), table.models.size(),
            table.slo_us / 1000.0, server->host().c_str(), server->port(), table.task.c_str());
  net::notify_service_manager("READY=1\nSTATUS=serving '" + table.task + "' on port " + std::to_string(server->port()));
  const auto reload = stop_signals.on_hangup([s = server.get()] { s->reload(); });
  const int sig = stop_signals.wait();
  net::notify_service_manager("STOPPING=1");
  log::info("stopping (signal %d)", sig);
  server->stop([&answers_written] { answers_written.release(); });
  return 0;
}

}  // namespace lull::cli
