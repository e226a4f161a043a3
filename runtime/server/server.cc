// `lull serve` as one object (what it owns and the order: see server.h).
#include "runtime/server/server.h"

#include "runtime/pools/kubernetes_pool.h"
#include "runtime/manager/load_forecast.h"
#include "runtime/pools/local_process_pool.h"
#include "runtime/log/log.h"
#include "runtime/net/service_notify.h"
#include "runtime/core/policy_loader.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "schema/one_line.h"

namespace lull::server {

namespace {
void say(const std::string& line) { log::info("%s", line.c_str()); }
}  // namespace

Server::Server(ServeSpec spec)
    : spec_(std::move(spec)), loop_(clock_, say), wait_(spec_.wait_for_servers_us, spec_.wait_retry_us) {
  session::ServeOptions& opts = spec_.session;
  if (spec_.online) {
    provider_ = std::make_unique<core::BackgroundPolicyProvider>(*spec_.online, say);
    opts.online = provider_.get();
  }
  spec_.frontend.task = spec_.table.task;
  for (const auto& m : spec_.table.models) model_names_.push_back(m.name);
  if (spec_.fleet.enabled()) {
    build_fleet();
    return;
  }
  std::vector<torchserve::WorkerEndpoint> workers = spec_.servers;
  if (spec_.autoscale.enabled) {
    build_autoscaler();
    workers.assign(static_cast<std::size_t>(scaler_->slots()), torchserve::WorkerEndpoint{});  // vacant slots
    opts.pool_managed = true;
    opts.worker_names.assign(static_cast<std::size_t>(scaler_->slots()), "");
    pools::ServingAutoscaler* scaler = scaler_.get();
    opts.on_arrival = [scaler](std::int64_t t_us) { scaler->record_arrival(t_us); };
    opts.extra_metrics = [scaler, before = opts.extra_metrics] {
      return (before ? before() : std::string()) + scaler->metrics_text();
    };
  } else {
    if (!wait_.enabled()) check_servers(workers);  // else start() retries it
    for (const auto& w : workers) opts.worker_names.push_back(w.inference_url);
  }
  if (spec_.variants.enabled()) {
    variant_client_ = make_transport();
    variant_calls_ = std::make_unique<net::InterruptibleTransport>(*variant_client_);
    if (spec_.model_control) {
      model_control_ = spec_.model_control(*variant_calls_);
    } else {
      torchserve::ModelManagementOptions o;
      o.management_key = spec_.management_key;
      o.server_key_source = spec_.management_key_source;
      model_control_ = std::make_unique<torchserve::TorchServeModelControl>(*variant_calls_, o, spec_.variants.archive);
    }
    auto arrived = opts.on_arrival;
    opts.on_arrival = [this, arrived](std::int64_t t_us) {
      if (manager::VariantController* v = variant_controller_.load()) v->record_arrival();
      if (arrived) arrived(t_us);
    };
    auto before = opts.extra_metrics;
    opts.extra_metrics = [this, before] {
      std::string out = before ? before() : "";
      std::lock_guard<std::mutex> lock(switcher_mu_);
      if (switcher_) out += switcher_->metrics_text();
      return out;
    };
  }
  if (!spec_.drift.out_path.empty()) {
    recompiler_ = std::make_unique<session::DriftRecompiler>(spec_.drift.served, spec_.drift.out_path,
                                                             spec_.drift.recompile, spec_.drift.write, say);
    opts.on_drift = [r = recompiler_.get()](const session::DriftEvent& e) { r->on_drift(e); };
  }
  backend_ =
      std::make_unique<torchserve::TorchServeBackend>(workers, model_names_, backend_options(), make_transport());
  session_ = std::make_unique<session::ServeSession>(spec_.table, *backend_, *backend_, clock_, opts);
  if (recompiler_)  // recompiled sets are swapped in live
    recompiler_->connect([this](const std::vector<schema::PolicySet>& sets) {
      for (const auto& set : sets) {
        const core::PolicyTable table = core::policy_table_from_proto(set, {}, "--recompile-on-drift set");
        session_->replace_policies(spec_.drift.view ? spec_.drift.view(table) : table);
      }
      if (spec_.drift.on_recompiled) spec_.drift.on_recompiled(sets.front());  // the same latencies in each
    });
}

std::unique_ptr<net::HttpTransport> Server::make_transport() const {
  if (spec_.transport) return spec_.transport();
  return std::make_unique<net::HttpClient>();
}

torchserve::TorchServeOptions Server::backend_options() const {
  torchserve::TorchServeOptions o = spec_.backend;
  // TorchServe's model check again before a worker that went down rejoins
  // (another protocol's health probe asks its model's readiness already).
  if (spec_.model_check && !spec_.check_models && !o.rejoin_model_check) {
    torchserve::ModelCheckOptions check;
    check.management_key = spec_.management_key;
    if (spec_.management_key_source)
      check.management_key_for = [this](const std::string& url) { return spec_.management_key_source(url, false); };
    o.rejoin_model_check = check;
  }
  return o;
}

void Server::check_servers(const std::vector<torchserve::WorkerEndpoint>& servers) {
  if (!spec_.model_check) return;
  const std::unique_ptr<net::HttpTransport> transport = make_transport();
  net::HttpTransport& client = *transport;
  if (spec_.check_models) {
    spec_.check_models(client, servers, model_names_);
    return;
  }
  torchserve::ModelCheckOptions check;
  check.management_key = spec_.management_key;
  if (spec_.management_key_source)
    check.management_key_for = [this](const std::string& url) { return spec_.management_key_source(url, false); };
  const auto warnings = torchserve::check_models_loaded(client, servers, model_names_, check);
  if (spec_.strict_model_batching && !warnings.empty())
    throw torchserve::ModelCheckError(warnings.front() + " (--strict-model-batching)");
  for (const auto& w : warnings) log::warn("%s", w.c_str());
}

void Server::build_fleet() {
  FleetSpec& f = spec_.fleet;
  std::vector<std::vector<frontend::QueryService*>> services(f.groups.size());
  for (std::size_t c = 0; c < f.groups.size(); ++c) {
    for (std::size_t k = 0; k < f.groups[c].size(); ++k) {
      FleetGroupSpec& gs = f.groups[c][k];
      auto g = std::make_unique<FleetGroup>();
      g->name = "class '" + f.tables.classes[c].name + "', kind '" + f.tables.classes[c].kinds[k].kind + "'";
      session::ServeOptions opts = spec_.session;
      opts.library = gs.library;
      opts.group = g->name;
      std::vector<torchserve::WorkerEndpoint> servers = gs.servers;
      if (gs.autoscale.enabled) {  // as one system's pool (the constructor), over the kind's library
        open_autoscale_log(spec_.autoscale.log_path);
        g->pool_client = make_transport();
        FleetGroup* group = g.get();
        make_autoscaler(
            gs.autoscale, gs.library.empty() ? std::vector<core::PolicyTable>{gs.table} : gs.library, g->name + ": ",
            [group] { return group->session ? group->session->served_pattern() : ArrivalProcess::poisson(); },
            *g->pool_client, &g->pool, &g->scaler);
        pools::ServingAutoscaler* scaler = g->scaler.get();
        servers.assign(static_cast<std::size_t>(scaler->slots()), torchserve::WorkerEndpoint{});  // vacant slots
        opts.pool_managed = true;
        opts.worker_names.assign(static_cast<std::size_t>(scaler->slots()), "");
        opts.on_arrival = [scaler](std::int64_t t_us) { scaler->record_arrival(t_us); };
        opts.extra_metrics = [scaler, before = opts.extra_metrics] {
          return (before ? before() : std::string()) + scaler->metrics_text();
        };
      } else {
        if (!wait_.enabled()) check_servers(gs.servers);  // else start_fleet() retries it
        for (const auto& w : gs.servers) opts.worker_names.push_back(w.inference_url);
      }
      if (!gs.drift.out_path.empty()) {  // this kind's library alone is recompiled
        g->recompiler = std::make_unique<session::DriftRecompiler>(gs.drift.served, gs.drift.out_path,
                                                                   gs.drift.recompile, gs.drift.write, say);
        opts.on_drift = [r = g->recompiler.get()](const session::DriftEvent& e) { r->on_drift(e); };
      }
      g->backend =
          std::make_unique<torchserve::TorchServeBackend>(servers, model_names_, backend_options(), make_transport());
      g->session = std::make_unique<session::ServeSession>(gs.table, *g->backend, *g->backend, clock_, opts);
      if (g->recompiler)
        g->recompiler->connect(
            [session = g->session.get(), on = gs.drift.on_recompiled](const std::vector<schema::PolicySet>& sets) {
              for (const auto& set : sets)
                session->replace_policies(core::policy_table_from_proto(set, {}, "--recompile-on-drift set"));
              if (on) on(sets.front());
            });
      services[c].push_back(g->session.get());
      groups_.push_back(std::move(g));
    }
  }
  fleet_ = std::make_unique<session::FleetService>(f.tables, std::move(services), clock_, f.seed);
}

int Server::start_fleet() {
  int up = 0;
  const auto checked = [this](std::string*) {
    for (const auto& kinds : spec_.fleet.groups)
      for (const auto& gs : kinds)
        if (!gs.autoscale.enabled) check_servers(gs.servers);
    return true;
  };
  if (wait_.enabled() && !wait_.until("the model servers", checked)) return 0;
  for (auto& g : groups_) {
    int group_up = g->backend->start();
    if (group_up == 0 && !g->scaler && wait_.enabled()) {  // the health controller pings on
      FleetGroup* group = g.get();
      const auto answered = [this, group](std::string* why) {
        *why = group->name + ": no worker answers " + spec_.health_probe;
        return group->session->healthy();
      };
      if (!wait_.until("the model servers", answered)) return up;
      for (int w = 0; w < group->backend->num_workers(); ++w) group_up += group->backend->worker_up(w);
    }
    if (g->scaler) {  // the pool starts its workers; each joins when its checks pass
      g->slots = std::make_unique<pools::SessionSlots>(*g->backend, *g->session);
      g->scaler->attach(*g->slots);
      up += start_autoscaler(*g->scaler, *g->pool, g->name + ": ");
      if (g->scaler->stop_requested()) return up;
      continue;
    }
    if (group_up == 0) throw std::runtime_error(g->name + ": no worker answers " + spec_.health_probe);
    up += group_up;
  }
  if (interrupted_) return up;
  for (auto& g : groups_)
    if (g->recompiler) loop_.add(*g->recompiler);
  loop_.start();
  open_frontend(*fleet_);
  return up;
}

void Server::listen_early() {
  frontend_ = std::make_unique<frontend::Frontend>(gate_, spec_.frontend);
  frontend_->start();
  if (spec_.on_listening) spec_.on_listening(frontend_->port());
  log::info("listening on %s:%d, not ready: waiting up to %g s for the model servers (--wait-for-servers-s)",
            spec_.frontend.host.c_str(), frontend_->port(), static_cast<double>(spec_.wait_for_servers_us) / 1e6);
}

void Server::open_frontend(frontend::QueryService& service) {
  gate_.open(service);
  if (wait_.enabled()) log::info("ready after %.1f s of waiting for the model servers", wait_.elapsed_s());
  if (frontend_) return;
  frontend_ = std::make_unique<frontend::Frontend>(gate_, spec_.frontend);
  frontend_->start();
}

void Server::open_autoscale_log(const std::string& path) {
  if (path.empty() || path == "-" || log_file_.is_open()) return;
  log_file_.open(path, std::ios::app);
  if (!log_file_) throw SpecError("--autoscale-log " + path + ": cannot open for writing");
}

void Server::make_autoscaler(AutoscaleSpec& a, const std::vector<core::PolicyTable>& library, const std::string& prefix,
                             std::function<ArrivalProcess()> pattern, net::HttpTransport& client,
                             std::unique_ptr<manager::WorkerPool>* pool,
                             std::unique_ptr<pools::ServingAutoscaler>* scaler) {
  const auto log = [this, prefix](const std::string& line) { autoscale_log(prefix + line); };
  try {
    if (a.pool == "kubernetes") {
      pools::KubernetesPoolOptions o = a.kubernetes;
      o.log = log;
      auto kube = std::make_unique<pools::KubernetesPool>(client, clock_, o);
      a.scaler.refresh = [k = kube.get()] { k->refresh(); };
      a.scaler.pool_metrics = [k = kube.get()] { return k->metrics_text(); };
      *pool = std::move(kube);
    } else {
      *pool = std::make_unique<pools::LocalProcessPool>(client, clock_, a.local);
    }
    a.scaler.log = log;
    a.scaler.pattern = std::move(pattern);
    *scaler = std::make_unique<pools::ServingAutoscaler>(library, a.scaler, **pool, clock_);
  } catch (const std::invalid_argument& e) {
    throw SpecError(prefix + e.what());
  }
}

void Server::build_autoscaler() {
  AutoscaleSpec& a = spec_.autoscale;
  open_autoscale_log(a.log_path);
  pool_client_ = make_transport();
  // Capacity for the pattern being served: the session exists
  // before the first decision (start()).
  make_autoscaler(
      a, spec_.session.library, "",
      [this] { return session_ ? session_->served_pattern() : ArrivalProcess::poisson(); }, *pool_client_, &pool_,
      &scaler_);
}

int Server::start_autoscaler(pools::ServingAutoscaler& scaler, manager::WorkerPool& pool, const std::string& what) {
  const int up = scaler.start_initial(std::max(spec_.autoscale.start_timeout_us, spec_.wait_for_servers_us));
  if (scaler.stop_requested()) return up;  // interrupted: the caller stops
  if (up == 0) {
    std::string why;
    for (const auto& w : pool.list_workers())
      if (!w.failure.empty()) why = " (" + w.id + ": " + w.failure + ")";
    throw std::runtime_error(what + "autoscale: no initial worker came up" + why);
  }
  loop_.add(scaler);
  return up;
}

void Server::autoscale_log(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu_);
  log::info("%s", line.c_str());
  if (log_file_.is_open()) log_file_ << line << std::endl;
}

Server::~Server() { stop(); }

void Server::interrupt() {
  interrupted_ = true;
  wait_.interrupt();
  if (scaler_) scaler_->request_stop();
  for (auto& g : groups_)
    if (g->scaler) g->scaler->request_stop();
  interrupt_pool();
}

void Server::interrupt_pool() {
  // A Kubernetes API call in progress, or its backoff wait, ends at once:
  // SIGTERM must not wait one out.
  if (auto* kube = dynamic_cast<pools::KubernetesPool*>(pool_.get())) kube->interrupt();
  for (auto& g : groups_)
    if (auto* kube = dynamic_cast<pools::KubernetesPool*>(g->pool.get())) kube->interrupt();
  // So does a model load's management API call (a variant switch).
  if (variant_calls_) variant_calls_->interrupt();
}

int Server::start() {
  if (wait_.enabled()) {
    wait_.arm();
    listen_early();
  }
  if (fleet_) return start_fleet();
  const auto checked = [this](std::string*) {
    check_servers(spec_.servers);
    return true;
  };
  if (wait_.enabled() && !scaler_ && !wait_.until("the model servers", checked)) return 0;
  // Pings every worker; those up join the Dispatcher's rotation through the
  // session's health handler. With --autoscale the pool starts the workers,
  // and each joins when its checks pass. With a wait, the health controller
  // pings on until one answers.
  if (backend_->start() == 0 && !scaler_) {
    const std::string none = "no worker answers " + spec_.health_probe;
    if (!wait_.enabled()) throw std::runtime_error(none);
    const auto answered = [this, &none](std::string* why) {
      *why = none;
      return session_->healthy();
    };
    if (!wait_.until("the model servers", answered)) return 0;
  }
  int up = static_cast<int>(spec_.servers.size());
  if (scaler_) {
    slots_ = std::make_unique<pools::SessionSlots>(*backend_, *session_);
    scaler_->attach(*slots_);
    up = start_autoscaler(*scaler_, *pool_, "");
    if (scaler_->stop_requested()) return up;
  }
  if (interrupted_) return up;
  if (spec_.variants.enabled()) start_variants();
  if (recompiler_) loop_.add(*recompiler_);
  loop_.start();
  open_frontend(*session_);
  return up;
}

void Server::start_variants() {
  const VariantSpec& v = spec_.variants;
  manager::WorkerList list;
  if (scaler_) {
    list = [s = scaler_.get()] { return s->management_urls_up(); };
  } else {
    std::vector<std::string> management;
    for (const auto& w : spec_.servers) management.push_back(w.management_url);
    list = [management] { return management; };
  }
  swap_ = std::make_unique<pools::SessionPolicySwap>(*session_, v.drain_timeout_ms);
  {
    std::lock_guard<std::mutex> lock(switcher_mu_);
    switcher_ = std::make_unique<manager::VariantSwitcher>(v.variants, list, *model_control_, *swap_, say, v.switching);
  }
  manager::VariantController::OnSwitch on_switch;
  if (scaler_) on_switch = [s = scaler_.get()](const std::vector<core::PolicyTable>& lib) { s->use_library(lib); };
  variant_controller_owned_ = std::make_unique<manager::VariantController>(
      *switcher_, manager::make_forecaster(v.load), v.interval_us, clock_, std::move(on_switch), say);
  variant_controller_ = variant_controller_owned_.get();
  loop_.add(*variant_controller_owned_);
}

void Server::reload() {
  if (fleet_) return reload_fleet();
  if (spec_.variants.enabled()) {
    log::warn("SIGHUP: not with --variant-sets (the variant switcher owns the policies); nothing reloaded");
    return;
  }
  net::notify_service_manager(net::reloading_state());
  try {
    const std::vector<core::PolicyTable> tables =
        spec_.session.library.empty()
            ? std::vector<core::PolicyTable>{core::load_policy_table(spec_.policies, spec_.expect)}
        : spec_.load_library ? spec_.load_library()
                             : core::load_policy_library(spec_.policies, {});
    session_->swap_policies_and_wait(tables, {}, 10000);
    if (scaler_) scaler_->use_library(tables);
    std::size_t count = 0;
    for (const auto& t : tables) count += t.policies.size();
    log::info("SIGHUP: reloaded %s (%zu policies, %zu %s)", spec_.policies.c_str(), count, tables.size(),
              tables.size() == 1 ? "worker count" : "worker counts");
  } catch (const std::exception& e) {
    log::error("SIGHUP: %s; still serving the previous policies", one_line(e.what()).c_str());
  }
  net::notify_service_manager("READY=1");
}

void Server::reload_fleet() {
  net::notify_service_manager(net::reloading_state());
  try {
    const core::FleetTables next = core::load_fleet_tables(spec_.policies);
    const std::string refusal = core::fleet_reload_refusal(spec_.fleet.tables, next);
    if (!refusal.empty()) throw std::runtime_error(spec_.policies + ": " + refusal);
    // Every group's sets first (each swapped whole under its session's lock),
    // then the splits that route to them.
    std::size_t group = 0, count = 0;
    for (std::size_t c = 0; c < next.classes.size(); ++c)
      for (std::size_t k = 0; k < next.classes[c].kinds.size(); ++k) {
        const auto& kind = next.classes[c].kinds[k];
        std::vector<core::PolicyTable> tables;
        for (const auto& t : kind.library)
          if (!spec_.fleet.groups[c][k].library.empty() || t.workers == kind.workers) tables.push_back(t);
        FleetGroup& g = *groups_.at(group++);
        g.session->swap_policies_and_wait(tables, {}, 10000);
        if (g.scaler) g.scaler->use_library(tables);
        for (const auto& t : tables) count += t.policies.size();
      }
    fleet_->replace_tables(next);
    log::info("SIGHUP: reloaded the fleet %s (%zu classes, %zu groups, %zu policies)", spec_.policies.c_str(),
              next.classes.size(), group, count);
  } catch (const std::exception& e) {
    log::error("SIGHUP: %s; still serving the previous fleet", one_line(e.what()).c_str());
  }
  net::notify_service_manager("READY=1");
}

void Server::stop(const std::function<void()>& answers_written) {
  if (stopped_) return;
  stopped_ = true;
  // First, so that it ends while the front end answers what waits: an
  // online compilation under way stops at its solver's next iteration.
  if (provider_) provider_->abandon();
  if (frontend_) {  // serving: answer what waits, take no more queries
    if (session_) session_->shutdown();
    for (auto& g : groups_) g->session->shutdown();
    frontend_->stop();
  }
  if (answers_written) answers_written();
  interrupt_pool();  // the autoscaler's tick may be in an API call
  loop_.stop();      // no controller ticks from here on
  if (recompiler_) recompiler_->connect(nullptr);
  for (auto& g : groups_)
    if (g->recompiler) g->recompiler->connect(nullptr);
  if (scaler_) scaler_->stop();
  for (auto& g : groups_)
    if (g->scaler) g->scaler->stop();
  pool_.reset();  // stops every worker process; its threads call into the session
  for (auto& g : groups_) g->pool.reset();
  if (backend_) backend_->stop();
  for (auto& g : groups_) g->backend->stop();
}

}  // namespace lull::server
