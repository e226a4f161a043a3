#pragma once
// Workers as the pods of a Kubernetes Deployment, found through the
// EndpointSlices of the Service in front of them. start_workers(n) raises the
// Deployment's replica count by n through the scale subresource;
// stop_worker(pod) drains the pod (drain hook), marks it to be removed first
// (pod-deletion-cost) and lowers the count by one, so the ReplicaSet removes
// that pod (a ReplicaSet removes not-ready pods before it weighs deletion
// costs, so that waits while another pod is starting). refresh() reads the EndpointSlices: a ready endpoint is up, a
// terminating one draining, one not ready starting; a pod that leaves the
// endpoints is stopped if lull removed it, else failed. The API calls retry
// with backoff (kubernetes_api.h); when they give up, the reason is the
// failure of the workers concerned and last_error().
//
// A pod whose endpoint stays not ready past not_ready_timeout_us (a container
// in CrashLoopBackOff, a readiness probe that never passes), whether new or
// after it served, is failed with that reason, logged and counted; the pool
// then scales it away like a drained pod (pod-deletion-cost, count lowered),
// so that the Deployment removes that very pod, and the autoscaler, which no
// longer counts it, replaces it if the load needs it. Each pool call (a
// refresh, a scale-out) is bounded in time as a whole, retries included
// (KubernetesApiOptions::sequence_budget_ms), so a hanging API server delays
// the manager's decisions by at most that.
//
// Until its pod shows in the endpoints, a worker asked for is a placeholder
// "pending-K" (starting); refresh() drops placeholders as pods appear. No
// thread of its own: the owner calls refresh() periodically (and after
// drains: a drained pod is scaled away in the next refresh()). Tested only
// against fake API servers (in memory: test/support/fake_kubernetes_api.h;
// over TLS: test/support/fake_kube_api.py), never a cluster; docs/operators-guide.md
// says what that covers.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/pools/kubernetes_api.h"
#include "runtime/pools/kubernetes_api_stats.h"
#include "runtime/manager/worker_pool.h"
#include "runtime/manager/worker_state_notices.h"

namespace lull::pools {

struct KubernetesPoolOptions {
  KubernetesApiOptions api;
  std::string ns = "default";
  std::string deployment;                           // the model servers' Deployment
  std::string service;                              // the Service selecting its pods
  std::string port_name = "http";                   // the Service port of the inference API
  std::string management_port_name = "management";  // TorchServe's management port; absent: the inference port
  // A pod's endpoint not ready for this long (since it showed, or since it
  // was last ready) fails it; 0: never (it counts as starting for ever).
  std::int64_t not_ready_timeout_us = 300'000'000;
  // Each failed API attempt, one line (KubernetesApiStats::record), and each
  // pod failed for the not-ready limit; may be empty.
  std::function<void(const std::string&)> log;
};

class KubernetesPool final : public manager::WorkerPool {
 public:
  KubernetesPool(net::HttpTransport& client, const core::Clock& clock, KubernetesPoolOptions options);

  std::vector<std::string> start_workers(int n) override;
  void stop_worker(const std::string& id) override;
  std::vector<manager::WorkerInfo> list_workers() override;  // as of the last refresh()
  void set_drain_hook(manager::DrainHook hook) override;
  void set_state_handler(manager::WorkerStateHandler handler) override;

  // Reads the endpoints and scales away drained pods. Never throws: a failed
  // call is recorded in last_error() (the workers keep their last known state).
  void refresh();
  std::string last_error();
  // Any thread (lull is stopping): the API call in progress, a backoff wait
  // included, fails at once and later calls are not sent (KubernetesApi::interrupt).
  void interrupt();
  // The API's failed attempts and give-ups (KubernetesApiStats) and the pods
  // failed for the not-ready limit, for /metrics.
  std::string metrics_text();

 private:
  struct Worker {
    manager::WorkerInfo info;
    bool lull_stops = false;   // stop_worker() was called
    bool drained = false;      // the serving layer said so
    bool scaled_away = false;  // the replica count was lowered for it
  };
  void set_state(Worker& w, manager::WorkerState s, std::vector<manager::WorkerInfo>& changed,
                 const std::string& failure = "");
  std::string url(const std::string& address, int port) const;
  // Fails the pods not ready past the limit (under mu_); returns their log lines.
  std::vector<std::string> fail_stuck_pods(std::vector<manager::WorkerInfo>& changed);

  KubernetesApiStats stats_;  // before api_: its hook counts here
  KubernetesApi api_;
  const core::Clock& clock_;
  KubernetesPoolOptions options_;
  std::mutex mu_;                // workers_, pending_, last_error_
  std::mutex calls_mu_;          // one API sequence (read, then set, the count) at a time
  std::vector<Worker> workers_;  // pods seen, then placeholders
  int next_pending_ = 0;
  std::uint64_t not_ready_failures_ = 0;  // pods failed for the not-ready limit
  std::string last_error_;
  manager::DrainHook drain_hook_;
  manager::WorkerStateNotices notices_;  // state changes to the handler, in order, never under mu_
};

}  // namespace lull::pools
