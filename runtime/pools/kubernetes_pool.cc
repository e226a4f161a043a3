// A Kubernetes Deployment as a worker pool (why and how: see kubernetes_pool.h).
#include "runtime/pools/kubernetes_pool.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "runtime/net/prometheus_text.h"

namespace lull::pools {

namespace {
bool is_placeholder(const std::string& id) { return id.rfind("pending-", 0) == 0; }

// The API's options with the pool's hook added after the caller's own.
KubernetesApiOptions with_failure_hook(KubernetesApiOptions api, KubernetesApiStats& stats,
                                       std::function<void(const std::string&)> log) {
  auto previous = std::move(api.on_failed_attempt);
  api.on_failed_attempt = [previous, &stats, log = std::move(log)](const KubernetesApiAttempt& a) {
    if (previous) previous(a);
    const std::string line = stats.record(a);
    if (log) log(line);
  };
  return api;
}
}  // namespace

KubernetesPool::KubernetesPool(net::HttpTransport& client, const core::Clock& clock, KubernetesPoolOptions options)
    : api_(client, with_failure_hook(options.api, stats_, options.log)), clock_(clock), options_(std::move(options)) {
  if (options_.deployment.empty() || options_.service.empty())
    throw std::invalid_argument("Kubernetes pool: the Deployment and the Service must be named");
  if (options_.not_ready_timeout_us < 0)
    throw std::invalid_argument("Kubernetes pool: the not-ready limit must not be negative");
}

std::string KubernetesPool::metrics_text() {
  std::uint64_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = not_ready_failures_;
  }
  std::string out = stats_.metrics_text();
  net::prom::family(out, "lull_kubernetes_pods_not_ready_timeout_total", "counter",
                    "Pods failed because their endpoint stayed not ready past the limit (CrashLoopBackOff, a "
                    "readiness probe that never passes); each is scaled away.");
  net::prom::sample(out, "lull_kubernetes_pods_not_ready_timeout_total", static_cast<double>(n));
  return out;
}

std::vector<std::string> KubernetesPool::fail_stuck_pods(std::vector<manager::WorkerInfo>& changed) {
  std::vector<std::string> lines;
  if (options_.not_ready_timeout_us <= 0) return lines;
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g s", static_cast<double>(options_.not_ready_timeout_us) * 1e-6);
  const std::int64_t now = clock_.now_us();
  for (auto& w : workers_) {
    // A placeholder has no pod in the endpoints yet (unscheduled, say): not its case.
    if (is_placeholder(w.info.id) || w.lull_stops || w.info.state != manager::WorkerState::kStarting) continue;
    if (now - w.info.since_us < options_.not_ready_timeout_us) continue;
    const std::string why = std::string("endpoint not ready for ") + limit +
                            " (the not-ready limit): its container keeps failing (CrashLoopBackOff?) or its "
                            "readiness probe never passes";
    set_state(w, manager::WorkerState::kFailed, changed, why);
    // Scaled away by the next refresh, as a drained pod is: the Deployment removes this pod.
    w.lull_stops = true;
    w.drained = true;
    ++not_ready_failures_;
    lines.push_back("kubernetes pool: pod " + w.info.id + " failed: " + why +
                    "; marked to be removed and the replica count lowered once no other pod is starting");
  }
  return lines;
}

void KubernetesPool::set_drain_hook(manager::DrainHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  drain_hook_ = std::move(hook);
}

void KubernetesPool::set_state_handler(manager::WorkerStateHandler handler) {
  notices_.set_handler(std::move(handler));
}

void KubernetesPool::set_state(Worker& w, manager::WorkerState s, std::vector<manager::WorkerInfo>& changed,
                               const std::string& failure) {
  if (w.info.state == s && failure.empty()) return;
  w.info.state = s;
  w.info.since_us = clock_.now_us();
  if (!failure.empty()) w.info.failure = failure;
  changed.push_back(w.info);
}

std::string KubernetesPool::url(const std::string& address, int port) const {
  const bool v6 = address.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

void KubernetesPool::interrupt() { api_.interrupt(); }

std::string KubernetesPool::last_error() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

std::vector<std::string> KubernetesPool::start_workers(int n) {
  if (n < 0) throw std::invalid_argument("start_workers: n < 0");
  std::vector<std::string> ids;
  std::vector<manager::WorkerInfo> changed;
  std::string failure;
  if (n > 0) {
    std::lock_guard<std::mutex> calls(calls_mu_);
    api_.begin_sequence();
    try {
      const std::int64_t replicas = api_.get_replicas(options_.ns, options_.deployment);
      if (replicas + n > kMaxKubernetesReplicas)
        throw std::runtime_error("Kubernetes Deployment " + options_.deployment + ": " + std::to_string(replicas) +
                                 " replicas + " + std::to_string(n) + " is over the API's limit of " +
                                 std::to_string(kMaxKubernetesReplicas));
      api_.set_replicas(options_.ns, options_.deployment, static_cast<int>(replicas + n));
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure.empty()) last_error_ = failure;
    for (int i = 0; i < n; ++i) {
      Worker w;
      w.info.id = "pending-" + std::to_string(next_pending_++);
      w.info.since_us = clock_.now_us();
      w.info.state = failure.empty() ? manager::WorkerState::kStarting : manager::WorkerState::kFailed;
      w.info.failure = failure;
      ids.push_back(w.info.id);
      changed.push_back(w.info);
      workers_.push_back(std::move(w));
    }
    notices_.queue(changed);
  }
  notices_.deliver();
  return ids;
}

void KubernetesPool::stop_worker(const std::string& id) {
  std::vector<manager::WorkerInfo> changed;
  manager::DrainHook hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(workers_.begin(), workers_.end(), [&](const Worker& w) { return w.info.id == id; });
    if (it == workers_.end()) throw std::invalid_argument("worker pool: no worker '" + id + "'");
    if (it->lull_stops || it->info.state == manager::WorkerState::kStopped ||
        it->info.state == manager::WorkerState::kFailed)
      return;
    it->lull_stops = true;
    if (it->info.state == manager::WorkerState::kUp) {
      set_state(*it, manager::WorkerState::kDraining, changed);
      hook = drain_hook_;
    }
    if (!hook) it->drained = true;  // starting (never served), or no serving layer to ask
    notices_.queue(changed);
  }
  notices_.deliver();
  if (hook) {
    hook(id, [this, id] {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& w : workers_)
        if (w.info.id == id) w.drained = true;
    });
  }
}

std::vector<manager::WorkerInfo> KubernetesPool::list_workers() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<manager::WorkerInfo> out;
  for (const auto& w : workers_) out.push_back(w.info);
  return out;
}

void KubernetesPool::refresh() {
  std::lock_guard<std::mutex> calls(calls_mu_);
  api_.begin_sequence();
  std::vector<manager::WorkerInfo> changed;
  std::vector<std::string> lines;
  std::string error;
  // 1. Scale away the pods that are drained: mark each, then lower the count once for all.
  std::vector<std::string> to_remove;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A ReplicaSet removes a pod that is not ready before it looks at deletion
    // costs: while one is starting, lowering the count would remove it, not the
    // drained pod. Those wait; a placeholder (a pod not yet wanted) need not.
    const bool pod_starting = std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) {
      return w.info.state == manager::WorkerState::kStarting && !w.lull_stops;
    });
    for (const auto& w : workers_)
      if (w.lull_stops && w.drained && !w.scaled_away && (is_placeholder(w.info.id) || !pod_starting))
        to_remove.push_back(w.info.id);
  }
  if (!to_remove.empty()) {
    try {
      for (const auto& id : to_remove) {
        if (is_placeholder(id)) continue;
        try {
          api_.mark_pod_for_removal(options_.ns, id);
        } catch (const KubernetesApiError& e) {
          // Gone already (404): its replacement is starting, so not ready, and goes first.
          if (e.status != 404) throw;
        }
      }
      const int replicas = api_.get_replicas(options_.ns, options_.deployment);
      api_.set_replicas(options_.ns, options_.deployment, std::max(0, replicas - static_cast<int>(to_remove.size())));
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& w : workers_)
        if (std::find(to_remove.begin(), to_remove.end(), w.info.id) != to_remove.end()) {
          w.scaled_away = true;
          if (is_placeholder(w.info.id)) set_state(w, manager::WorkerState::kStopped, changed);  // no pod to wait for
        }
      notices_.queue(changed);
    } catch (const std::exception& e) {
      error = e.what();  // tried again at the next refresh
    }
  }
  // 2. Read the endpoints.
  std::vector<KubernetesEndpoint> endpoints;
  std::vector<std::pair<std::string, int>> ports;
  int port = 0, management_port = 0;
  bool listed = false;
  try {
    endpoints = api_.list_endpoints(options_.ns, options_.service, &ports);
    for (const auto& [name, number] : ports) {
      if (name == options_.port_name || (port == 0 && name != options_.management_port_name)) port = number;
      if (name == options_.management_port_name) management_port = number;
    }
    listed = true;
  } catch (const std::exception& e) {
    error = e.what();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error.empty()) last_error_ = error;
    if (listed) {
      std::vector<Worker> pods, pending;
      for (auto& w : workers_) (is_placeholder(w.info.id) ? pending : pods).push_back(std::move(w));
      // Pods by id, and the ids listed now: one lookup each, not a scan (100k endpoints).
      std::unordered_map<std::string, std::size_t> index;
      for (std::size_t i = 0; i < pods.size(); ++i) index.emplace(pods[i].info.id, i);
      std::unordered_set<std::string> listed_pods;
      int new_pods = 0;
      for (const auto& ep : endpoints) {
        listed_pods.insert(ep.pod);
        auto [slot, added] = index.emplace(ep.pod, pods.size());
        if (added) {
          Worker w;
          w.info.id = ep.pod;
          w.info.state = manager::WorkerState::kStarting;
          w.info.since_us = clock_.now_us();
          changed.push_back(w.info);
          pods.push_back(std::move(w));
          ++new_pods;
        }
        Worker* it = &pods[slot->second];
        it->info.inference_url = url(ep.address, port);
        it->info.management_url = url(ep.address, management_port ? management_port : port);
        if (it->info.state == manager::WorkerState::kStopped || it->info.state == manager::WorkerState::kFailed)
          continue;
        if (ep.terminating || it->lull_stops)
          set_state(*it, manager::WorkerState::kDraining, changed);
        else if (ep.ready)
          set_state(*it, manager::WorkerState::kUp, changed);
        else  // a pod that served and no longer passes its readiness probe (its container died, say)
          set_state(
              *it, manager::WorkerState::kStarting, changed,
              it->info.state == manager::WorkerState::kUp ? "endpoint no longer ready (readiness probe failing)" : "");
      }
      for (auto& w : pods) {  // gone from the endpoints
        if (listed_pods.count(w.info.id) || w.info.state == manager::WorkerState::kStopped ||
            w.info.state == manager::WorkerState::kFailed)
          continue;
        if (w.lull_stops)
          set_state(w, manager::WorkerState::kStopped, changed);
        else
          set_state(w, manager::WorkerState::kFailed, changed, "pod left the endpoints of Service " + options_.service);
      }
      // Each new pod takes the place of the oldest placeholder still starting.
      std::vector<Worker> kept;
      for (auto& p : pending) {
        if (p.info.state == manager::WorkerState::kStarting && !p.lull_stops && new_pods > 0) {
          --new_pods;
          continue;
        }
        kept.push_back(std::move(p));
      }
      workers_ = std::move(pods);
      for (auto& p : kept) workers_.push_back(std::move(p));
      lines = fail_stuck_pods(changed);
    }
    notices_.queue(changed);
  }
  if (options_.log)
    for (const auto& line : lines) options_.log(line);
  notices_.deliver();
}

}  // namespace lull::pools
