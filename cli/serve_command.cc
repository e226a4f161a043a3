// lull serve: the model-less front end in front of TorchServe-compatible
// model servers, one per worker, scheduled by a compiled policy set. Runs
// until SIGINT or SIGTERM, then answers what is still waiting and exits.
#include <boost/program_options.hpp>

#include <iostream>
#include <memory>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/drift_recompiler.h"
#include "compiler/online/drift_recompile.h"
#include "cli/online_compile.h"
#include "cli/option_ranges.h"
#include "cli/output_file.h"
#include "cli/parse_options.h"
#include "cli/serve_autoscale.h"
#include "cli/serve_backend.h"
#include "cli/serve_variants.h"
#include "cli/stop_signals.h"
#include "schema/one_line.h"
#include "runtime/policy_loader.h"
#include "schema/input_limits.h"
#include "runtime/clock.h"
#include "runtime/serve/frontend.h"
#include "runtime/net/http_client.h"
#include "runtime/torchserve/model_check.h"
#include "runtime/query_inputs.h"
#include "runtime/torchserve/request_split.h"
#include "runtime/serve/serve_session.h"
#include "runtime/torchserve/torchserve_backend.h"
#include "runtime/torchserve/torchserve_token.h"
#include "runtime/torchserve/worker_endpoint.h"
#include "runtime/v2/v2_model_check.h"
#include "schema/policy_file.h"

namespace lull::cli {

namespace po = boost::program_options;

namespace {
// Stops the backend's threads before the session they call into goes away,
// on every way out of run_serve (declared after the session, so destroyed first).
struct StopBackendFirst {
  serve::TorchServeBackend& backend;
  ~StopBackendFirst() { backend.stop(); }
};
// The same for the worker pool's threads (--autoscale), which also call into
// the session: stopped before the backend and the session.
// The same for the variant switcher's thread (--variant-sets).
struct StopVariantsFirst {
  ServeVariants* variants;
  ~StopVariantsFirst() {
    if (variants) variants->stop();
  }
};
struct StopPoolFirst {
  ServeAutoscale* autoscale;
  ~StopPoolFirst() {
    if (autoscale) autoscale->stop();
  }
};
}  // namespace

int run_serve(int argc, char** argv) {
  OnlineCompileFlags online_flags;
  std::string profiles;
  std::string policies, workers_text, management_text, listen, port_file, token_file, recompile_out;
  serve::ServeOptions opts;
  serve::TorchServeOptions backend_opts;
  serve::FrontendOptions fe;
  ServeAutoscaleFlags autoscale_flags;
  ServeVariantsFlags variant_flags;
  ServeBackendFlags backend_flags;
  bool no_model_check = false, strict_model_batching = false;
  po::options_description desc("lull serve: serve a task through model servers under a compiled policy set");
  desc.add_options()
      ("policies", po::value(&policies)->required(), "policy set from lull compile (SET.pb)")
      ("servers", po::value(&workers_text), "model servers' inference URLs, one per worker: http://H:P,... "
       "(not with --autoscale: its worker pool starts them)")
      ("management-urls", po::value(&management_text), "their management URLs, same order (default: the inference URLs)")
      ("listen", po::value(&listen)->default_value("127.0.0.1:7070"), "HOST:PORT of the front end (port 0: any)")
      ("port-file", po::value(&port_file), "write the bound port here once listening ('-' for stdout)")
      ("max-body-bytes", ranged_value<std::size_t>(&fe.max_body_bytes, 1, limits::kMaxBodyBytes)->default_value(4 << 20),
       "larger request bodies get 413 (chunked ones too)")
      ("http-threads", po::value(&fe.io_threads)->default_value(2),
       "front-end I/O threads (event-driven: a connection or a waiting query holds none)")
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
      ("no-model-check", po::bool_switch(&no_model_check), "skip the model check at start (TorchServe: management API; v2: model readiness)")
      ("reject-late", po::bool_switch(&opts.reject_late),
       "the bouncer: answer 503 with Retry-After at once to a query even the fastest model cannot answer by "
       "its deadline at the current queue (default: serve it late, counted as a violation)")
      ("torchserve-token-file", po::value(&token_file),
       "TorchServe's key_file.json: its inference key goes on predictions and pings, its management key on "
       "the model check (as Authorization: Bearer KEY)")
      ("max-request-bytes", po::value(&backend_opts.max_request_bytes)->default_value(serve::kTorchServeMaxRequestBytes),
       "largest request body sent to a model server (TorchServe's max_request_size); larger batches go as "
       "several requests")
      ("strict-model-batching", po::bool_switch(&strict_model_batching),
       "fail (not warn) at start when a model's batchSize > 1 with maxBatchDelay > 0 would hold lull's batches")
      ("recompile-on-drift", po::value(&recompile_out),
       "on latency drift, compile a policy set from the observed latencies and write it to this file");
  add_serve_backend_options(desc, backend_flags);
  desc.add_options()("profiles", po::value(&profiles), "online compilation: the profiles the policies were compiled from");
  add_online_compile_options(desc, online_flags);
  po::options_description autoscale_desc("Autoscaling (--autoscale: a worker pool instead of --servers)");
  add_serve_autoscale_options(autoscale_desc, autoscale_flags);
  desc.add(autoscale_desc);
  po::options_description variants_desc("Model variants (--variant-sets: fewer models at high load)");
  add_serve_variants_options(variants_desc, variant_flags);
  desc.add(variants_desc);
  const char* usage =
      "usage: lull serve --policies SET.pb --servers URL,URL,... --listen 127.0.0.1:7070\n"
      "       lull serve --policies LIBRARY.pb --autoscale --worker-command 'CMD --port {port}' [options]";
  const std::vector<RenamedFlag> renamed = {
      {"--workers", "--workers is now --servers URL,URL (the model servers; --workers is a count in lull)"}};
  if (!parse_command_line(argc, argv, desc, usage, {nullptr, renamed, nullptr, "LULL_SERVE_"})) return 0;
  check_range("--http-threads", fe.io_threads, 1, limits::kMaxThreads);
  check_range("--header-timeout-ms", fe.header_timeout_ms, 1, limits::kMaxIntervalMs);
  check_range("--body-timeout-ms", fe.body_timeout_ms, 1, limits::kMaxIntervalMs);
  check_range("--idle-timeout-ms", fe.idle_timeout_ms, 1, limits::kMaxIntervalMs);
  check_range("--max-connections", fe.max_connections, 1, limits::kMaxConnections);
  check_range("--health-interval-ms", static_cast<double>(backend_opts.health_interval_ms), limits::kMinHealthIntervalMs,
              limits::kMaxIntervalMs);
  check_range("--health-timeout-ms", static_cast<double>(backend_opts.health_timeout_ms), 1, limits::kMaxIntervalMs);
  check_range("--batch-timeout-ms", static_cast<double>(backend_opts.batch_timeout_ms), 1, limits::kMaxIntervalMs);
  const ServeBackend protocol(backend_flags);
  backend_opts.wire = protocol.wire();
  const bool autoscale = autoscale_flags.autoscale.enabled;
  if (autoscale == !workers_text.empty())
    throw UsageError(autoscale ? "--servers with --autoscale: the worker pool starts the model servers"
                               : "--servers is required (or --autoscale with a worker pool)");
  std::vector<serve::WorkerEndpoint> workers;
  serve::TorchServeKeys keys;
  try {
    if (!token_file.empty()) keys = serve::read_torchserve_key_file(token_file);
    backend_opts.inference_key = keys.inference;
    if (!autoscale) workers = serve::parse_worker_endpoints(workers_text, management_text);
    // Every query the front end accepts must fit in one request on its own.
    const auto one_query = serve::encoded_batch_request_size({static_cast<size_t>(fe.max_body_bytes)}) +
                           (protocol.wire() ? protocol.wire()->envelope_bytes() : 0);
    if (one_query > backend_opts.max_request_bytes)
      throw std::invalid_argument("--max-body-bytes " + std::to_string(fe.max_body_bytes) + ": one such query encodes to " +
                                  std::to_string(one_query) + " bytes, over --max-request-bytes " +
                                  std::to_string(backend_opts.max_request_bytes) + "; lower --max-body-bytes");
    serve::parse_listen_address(listen, &fe.host, &fe.port);
    const serve::OutlierDetector check_eject_flags(backend_opts.outlier);  // throws on bad --eject-* values
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool online = online_compile_enabled(online_flags, profiles);
  runtime::PolicyExpectations expect;
  expect.workers = static_cast<int>(workers.size());
  // A library, or online compilation: the Dispatcher picks by the workers up;
  // one set without it must match the servers, as before.
  opts.library = runtime::load_policy_library(policies, {});
  if (opts.library.size() == 1 && !online && !autoscale) opts.library.clear();
  const runtime::PolicyTable table =
      opts.library.empty() ? runtime::load_policy_table(policies, expect) : opts.library.front();
  // Before any thread starts (the online provider's is the first), so that
  // every thread inherits the blocked mask and only the watcher gets them.
  StopSignals stop_signals;
  std::unique_ptr<CompilerPolicySource> source;
  std::unique_ptr<runtime::BackgroundPolicyProvider> provider;
  if (online) {
    source = std::make_unique<CompilerPolicySource>(policies, profiles, online_flags);
    provider = std::make_unique<runtime::BackgroundPolicyProvider>(
        *source, [](const std::string& line) { std::cerr << "lull serve: " << line << std::endl; });
    opts.online = provider.get();
  }
  fe.task = table.task;

  std::vector<std::string> model_names;
  for (const auto& m : table.models) model_names.push_back(m.name);
  std::unique_ptr<ServeAutoscale> scaling;
  if (autoscale) {
    // Every worker passes the model check when its pool starts it.
    if (protocol.v2())
      autoscale_flags.worker_check = [&protocol, models = no_model_check ? std::vector<std::string>{} : model_names](
                                         serve::HttpTransport& client, const serve::WorkerEndpoint& w,
                                         std::int64_t timeout_ms) { return protocol.check_worker(client, w, models, timeout_ms); };
    scaling = std::make_unique<ServeAutoscale>(autoscale_flags, opts.library,
                                               no_model_check ? std::vector<std::string>{} : model_names, keys.management);
    workers.assign(static_cast<std::size_t>(scaling->slots()), serve::WorkerEndpoint{});  // vacant slots
    scaling->configure(opts);
  } else if (!no_model_check && protocol.v2()) {
    serve::HttpClient client;
    serve::V2ModelCheckOptions check;
    check.input_name = protocol.input_name();
    serve::check_v2_models_ready(client, workers, model_names, check);
  } else if (!no_model_check) {
    serve::HttpClient client;
    serve::ModelCheckOptions check;
    check.management_key = keys.management;
    const auto warnings = serve::check_models_loaded(client, workers, model_names, check);
    if (strict_model_batching && !warnings.empty())
      throw serve::ModelCheckError(warnings.front() + " (--strict-model-batching)");
    for (const auto& w : warnings) std::cerr << "lull serve: warning: " << w << std::endl;
  }
  if (!autoscale)
    for (const auto& w : workers) opts.worker_names.push_back(w.inference_url);
  std::unique_ptr<ServeVariants> variants;
  if (!variant_flags.sets.empty()) {
    // Online compilation and drift recompilation make policies for the full
    // set only; a variant's models would not be what they pick.
    if (online || !recompile_out.empty())
      throw UsageError("--variant-sets: not with online compilation or --recompile-on-drift");
    if (autoscale && autoscale_flags.pool != "local")
      throw UsageError("--variant-sets with --autoscale: only with --worker-pool local (its model check makes sure a new "
                       "worker holds every model of --policies before it joins; the Kubernetes pool checks health only)");
    if (autoscale && no_model_check)
      throw UsageError("--variant-sets with --autoscale: not with --no-model-check (a new worker must be checked to "
                       "hold every model of --policies before it joins)");
    manager::WorkerList list;
    if (autoscale) {
      list = [s = scaling.get()] { return s->management_urls_up(); };
    } else {
      std::vector<std::string> management;
      for (const auto& w : workers) management.push_back(w.management_url);
      list = [management] { return management; };
    }
    const std::vector<runtime::PolicyTable> full = opts.library.empty() ? std::vector<runtime::PolicyTable>{table}
                                                                        : opts.library;
    if (protocol.v2())
      variant_flags.model_control = [&protocol](serve::HttpTransport& client) { return protocol.v2_model_control(client); };
    variants = std::make_unique<ServeVariants>(variant_flags, full, policies, list, keys.management);
    if (autoscale) variants->on_switch([s = scaling.get()](const std::vector<runtime::PolicyTable>& lib) { s->use_library(lib); });
    variants->configure(opts);
  }
  std::unique_ptr<DriftRecompiler> recompiler;  // outlives the session that calls it
  if (!recompile_out.empty()) {
    check_binary_output(recompile_out, "--recompile-on-drift");
    recompiler = std::make_unique<DriftRecompiler>(read_policy_library(policies).sets(0), recompile_out,
                                                   [](const std::string& line) { std::cerr << line << std::endl; });
    opts.on_drift = [r = recompiler.get()](const serve::DriftEvent& e) { r->on_drift(e); };
  }
  serve::QueryInputs inputs;
  runtime::WallClock clock;
  serve::TorchServeBackend backend(workers, model_names, inputs, backend_opts);
  serve::ServeSession session(table, backend, backend, inputs, clock, opts);
  // Recompiled sets are swapped in live; disconnected before the session dies.
  struct SwapIntoSession {
    DriftRecompiler* recompiler;
    ~SwapIntoSession() {
      if (recompiler) recompiler->connect(nullptr);
    }
  } swap_into_session{recompiler.get()};
  if (recompiler)
    recompiler->connect([&session, src = source.get()](const schema::PolicySet& set) {
      session.replace_policies(runtime::policy_table_from_proto(set, {}, "--recompile-on-drift set"));
      if (src) src->use_profiles(compiler::profiles_of(set));  // online compilation from the observed latencies too
    });
  StopBackendFirst stop_backend_first{backend};
  StopPoolFirst stop_pool_first{scaling.get()};
  StopVariantsFirst stop_variants_first{variants.get()};
  // Pings every worker; those up join the Dispatcher's rotation through the
  // session's health handler. With --autoscale the pool starts the workers,
  // and each joins when its checks pass.
  if (backend.start() == 0 && !autoscale)
    throw std::runtime_error(protocol.v2() ? "no worker answers GET /v2/models/{model}/ready" : "no worker answers GET /ping");
  // A stop signal while the first workers start ends their wait at once.
  const auto interrupt_start = stop_signals.subscribe([s = scaling.get()] {
    if (s) s->interrupt();
  });
  const int workers_up = autoscale ? scaling->start(backend, session) : static_cast<int>(workers.size());
  if (const int sig = stop_signals.received()) {
    std::cerr << "lull serve: stopping during start-up (signal " << sig << ")" << std::endl;
    return 0;
  }
  if (variants) variants->start(session);
  serve::Frontend frontend(session, fe);
  frontend.start();
  if (!port_file.empty()) write_output(port_file, std::to_string(frontend.port()) + "\n");
  std::cerr << "lull serve: task '" << table.task << "', " << workers_up << " workers" << (autoscale ? " (autoscaled)" : "") << ", "
            << table.models.size() << " models, SLO " << table.slo_us / 1000.0 << " ms, on http://" << fe.host
            << ":" << frontend.port() << "/predictions/" << table.task << std::endl;
  // SIGHUP: the policy file again, checked as at start (same task, SLO,
  // models and worker count), swapped in whole at the next arrival; a file
  // that is refused leaves the served policies as they were.
  const auto reload = stop_signals.on_hangup([&] {
    if (variants) {
      std::cerr << "lull serve: SIGHUP: not with --variant-sets (the variant switcher owns the policies); nothing reloaded"
                << std::endl;
      return;
    }
    try {
      const std::vector<runtime::PolicyTable> tables =
          opts.library.empty() ? std::vector<runtime::PolicyTable>{runtime::load_policy_table(policies, expect)}
                               : runtime::load_policy_library(policies, {});
      session.swap_policies_and_wait(tables, {}, 10000);
      if (scaling) scaling->use_library(tables);
      std::size_t count = 0;
      for (const auto& t : tables) count += t.policies.size();
      std::cerr << "lull serve: SIGHUP: reloaded " << policies << " (" << count << " policies, " << tables.size()
                << (tables.size() == 1 ? " worker count)" : " worker counts)") << std::endl;
    } catch (const std::exception& e) {
      std::cerr << "lull serve: SIGHUP: " << one_line(e.what()) << "; still serving the previous policies" << std::endl;
    }
  });
  const int sig = stop_signals.wait();
  std::cerr << "lull serve: stopping (signal " << sig << ")" << std::endl;
  session.shutdown();
  frontend.stop();
  return 0;
}

}  // namespace lull::cli
