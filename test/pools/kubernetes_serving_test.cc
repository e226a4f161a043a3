// `lull serve --autoscale --worker-pool kubernetes` below the command line,
// with the Kubernetes API failing: the ServingAutoscaler over a
// KubernetesPool on the fake API server (fake_kube_api.py), whose pods run
// as stand-in model servers (--run-command), under a real TorchServe backend
// and ServeSession (serving_rig.h). The fake answers faults on demand
// (/_fake/faults, as the API does: a Status object), kills a pod's process
// (/_fake/kill-pod; the kubelet restarts it when told) or loses a pod. The
// API client's backoff waits are recorded, not slept. Verdicts are counts,
// log lines, /metrics and every answer 200, never a time:
//   - 409 Conflict on the scale PATCH once: retried, the scale-out happens;
//   - 500 on every scale PATCH for a while: the call gives up, scaling is on
//     hold, serving goes on with the pods up; once the API recovers the
//     scale-out happens;
//   - a pod's process killed while serving: out of rotation (its batch fails
//     over), back once Kubernetes restarted it; a pod lost: failed, and the
//     Deployment's replacement joins; a pod that dies and is then lost
//     failed while serving (no start backoff);
//   - a pod that never becomes ready again (CrashLoopBackOff): failed at the
//     not-ready limit (the pool's clock is virtual too), scaled away, and
//     replaced by the autoscaler at its next decision;
//   - a hanging API server: each pool call gives up at its time budget, the
//     decision comes, serving goes on, scaling resumes once it answers.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "test/support/fake_kube_support.h"
#include "runtime/pools/kubernetes_pool.h"
#include "runtime/net/http_client.h"
#include "runtime/net/prometheus_text.h"
#include "test/pools/serving_rig.h"

using namespace lull::manager;
using namespace lull::pools;
using namespace lull::manager::testing;  // the rig, the fake cluster, answered_by, metric

namespace {

// The fake API server with no pods yet, each pod a stand-in server (batch_ms
// per batch) on 127.0.1.K; and the backoff waits its client recorded.
struct KubeCluster {
  KubeCluster(const std::string& name, int batch_ms)
      : api(fake_api({"--replicas", "0", "--run-command", ServingRig::server_command(batch_ms) + " --host {host}",
                      "--run-log-dir", secrets().dir + "/pods-" + name, "--probe-interval-s", "0.1"})) {}
  std::shared_ptr<std::vector<std::int64_t>> waits_ms = std::make_shared<std::vector<std::int64_t>>();
  ModelServerProcess api;
  // The pool's own clock (since when a pod is not ready), moved by the test.
  lull::core::VirtualClock pool_clock;
  std::int64_t not_ready_timeout_us = 300'000'000;
  std::int64_t call_budget_ms = 5000;
};

// The rig over a KubernetesPool on the cluster, wired as the Server (runtime/server)
// wires it (the pool's log lines, refresh before each decision, its metrics).
struct KubeRig : ServingRig {
  explicit KubeRig(KubeCluster& cluster)
      : ServingRig([&](lull::net::HttpClient& client, const lull::core::Clock&, const std::string&,
                       ServingAutoscalerOptions& o) {
          KubernetesPoolOptions po;
          po.api.server = "https://127.0.0.1:" + std::to_string(cluster.api.port());
          po.api.token_file = secrets().token;
          po.api.ca_file = secrets().cert;
          po.api.sleep_ms = [waits = cluster.waits_ms](std::int64_t ms) { waits->push_back(ms); };
          po.ns = "lull";
          po.deployment = "models";
          po.service = "models";
          po.log = o.log;
          po.not_ready_timeout_us = cluster.not_ready_timeout_us;
          po.api.sequence_budget_ms = cluster.call_budget_ms;
          auto pool = std::make_unique<KubernetesPool>(client, cluster.pool_clock, po);
          KubernetesPool* kube = pool.get();
          o.refresh = [kube] { kube->refresh(); };
          o.pool_metrics = [kube] { return kube->metrics_text(); };
          return std::unique_ptr<WorkerPool>(std::move(pool));
        }),
        cluster_(cluster) {}
  KubernetesPool& kube() { return static_cast<KubernetesPool&>(*pool); }
  // The two initial pods up and in rotation, then `fault` asked of the fake (empty: none).
  void start(const std::string& fault = "") {
    REQUIRE(scaler->start_initial(60'000'000) == 2);
    if (!fault.empty()) REQUIRE(control(fault));
  }
  // Reads the endpoints until `done` (the pool has no thread of its own).
  bool refresh_until(const std::function<bool()>& done) {
    return wait_until([&] {
      kube().refresh();
      return done();
    });
  }
  bool joined(const std::vector<std::string>& ids) {
    return refresh_until([&] {
      for (const auto& id : ids)
        if (scaler->slot_of(id) < 0) return false;
      return true;
    });
  }
  bool control(const std::string& path_and_query) { return fake_control(client, cluster_.api, path_and_query); }
  std::string metrics() { return session->metrics_text(); }
  // `n` queries, each answered 200, and none failed so far.
  void serves(int n) {
    auto answers = submit(n);
    answered_by(answers);
    CHECK(metric(metrics(), "lull_failed_total") == "lull_failed_total 0");
  }

  KubeCluster& cluster_;
};

}  // namespace

TEST_CASE("kubernetes serving: a 409 Conflict on the scale PATCH is retried and the scale-out happens",
          "[manager][kubernetes][serving][fault]") {
  KubeCluster cluster("409", 50);
  KubeRig rig(cluster);
  rig.start("/_fake/faults?method=PATCH&status=409&count=1&path=/scale");

  const ScaleDecision d = rig.load(400, 0, 1);  // 400 QPS: 4 workers
  REQUIRE(d.action == ScaleDecision::Action::kScaleOut);
  CHECK(d.count == 2);
  CHECK(*cluster.waits_ms == std::vector<std::int64_t>{200});  // one retry, after the first backoff
  const std::string log = rig.joined_log();
  INFO(log);
  CHECK(log.find("kubernetes API: PATCH " + kScale +
                 ": HTTP 409 Conflict: Operation cannot be fulfilled on deployments.apps \"models\": the object has "
                 "been modified; please apply your changes to the latest version and try again (attempt 1 of 5); "
                 "retrying in 200 ms") != std::string::npos);
  CHECK(log.find("failed (start)") == std::string::npos);
  REQUIRE(rig.joined({"models-2", "models-3"}));
  const std::string m = rig.metrics();
  CHECK(metric(m, "lull_kubernetes_api_failed_attempts_total{") ==
        "lull_kubernetes_api_failed_attempts_total{method=\"PATCH\",resource=\"scale\",status=\"409\"} 1");
  CHECK(metric(m, "lull_kubernetes_api_gave_up_total{") == "");  // the retry succeeded
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 4");
  CHECK(metric(m, "lull_autoscale_worker_failures_total{phase=\"start\"}") ==
        "lull_autoscale_worker_failures_total{phase=\"start\"} 0");
  auto answers = rig.submit(8);
  answered_by(answers);
  CHECK(metric(rig.metrics(), "lull_failed_total") == "lull_failed_total 0");
}

TEST_CASE("kubernetes serving: 500 on every scale PATCH holds scaling, serving goes on, scaling resumes after",
          "[manager][kubernetes][serving][fault]") {
  KubeCluster cluster("500", 50);
  KubeRig rig(cluster);
  rig.start("/_fake/faults?method=PATCH&status=500&count=-1&path=/scale");

  REQUIRE(rig.load(400, 0, 1).action == ScaleDecision::Action::kScaleOut);
  CHECK(*cluster.waits_ms == std::vector<std::int64_t>{200, 400, 800, 1600});  // five attempts, then the call gives up
  const std::string why =
      "Kubernetes API PATCH " + kScale + ": HTTP 500 InternalError: etcdserver: request timed out (after 5 attempts)";
  std::string log = rig.joined_log();
  INFO(log);
  CHECK(log.find("kubernetes API: PATCH " + kScale +
                 ": HTTP 500 InternalError: etcdserver: request timed out (attempt 5 of 5); giving up") !=
        std::string::npos);
  CHECK(log.find("failed (start): " + why +
                 "; scaling on hold for 2.0 s (2 failed starts in a row), serving with "
                 "the workers up") != std::string::npos);
  std::string m = rig.metrics();
  CHECK(metric(m, "lull_kubernetes_api_failed_attempts_total{") ==
        "lull_kubernetes_api_failed_attempts_total{method=\"PATCH\",resource=\"scale\",status=\"500\"} 5");
  CHECK(metric(m, "lull_kubernetes_api_gave_up_total{") ==
        "lull_kubernetes_api_gave_up_total{method=\"PATCH\",resource=\"scale\"} 1");
  CHECK(metric(m, "lull_autoscale_worker_failures_total{phase=\"start\"}") ==
        "lull_autoscale_worker_failures_total{phase=\"start\"} 2");
  CHECK(m.find("lull_autoscale_last_failure_info{worker=\"pending-") != std::string::npos);
  CHECK(m.find("reason=\"" + lull::net::prom::escape(why) + "\"} 1") != std::string::npos);
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 2");

  // Serving goes on with the two pods up; no 5xx, nothing lost.
  CHECK(rig.load(400, 1, 2).action == ScaleDecision::Action::kNone);  // on hold
  {
    auto answers = rig.submit(8);
    for (int slot : answered_by(answers))
      CHECK((slot == rig.scaler->slot_of("models-0") || slot == rig.scaler->slot_of("models-1")));
  }
  // The API recovers: the next decision after the hold scales out.
  REQUIRE(rig.control("/_fake/faults?clear=1"));
  const ScaleDecision d = rig.load(400, 2, 3);
  REQUIRE(d.action == ScaleDecision::Action::kScaleOut);
  CHECK(d.count == 2);
  REQUIRE(rig.joined({"models-2", "models-3"}));
  m = rig.metrics();
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 4");
  CHECK(metric(m, "lull_autoscale_hold_seconds") == "lull_autoscale_hold_seconds 0");
  CHECK(metric(m, "lull_kubernetes_api_gave_up_total{") ==
        "lull_kubernetes_api_gave_up_total{method=\"PATCH\",resource=\"scale\"} 1");  // no new failure
  auto answers = rig.submit(8);
  answered_by(answers);
  m = rig.metrics();
  CHECK(metric(m, "lull_failed_total") == "lull_failed_total 0");
}

TEST_CASE(
    "kubernetes serving: a pod whose process dies leaves rotation and rejoins after its restart, a lost pod "
    "is replaced",
    "[manager][kubernetes][serving][fault]") {
  KubeCluster cluster("kill", 1000);  // long batches: the kill lands in one
  KubeRig rig(cluster);
  rig.start();
  const int slot0 = rig.scaler->slot_of("models-0"), slot1 = rig.scaler->slot_of("models-1");
  REQUIRE(slot0 >= 0);
  REQUIRE(slot1 >= 0);

  auto answers = rig.submit(2);  // a batch on each pod
  REQUIRE(rig.control("/_fake/kill-pod?name=models-1&restart_after_s=3600"));
  for (int slot : answered_by(answers)) CHECK(slot == slot0);  // its batch failed over
  REQUIRE(rig.refresh_until([&] { return rig.scaler->slot_of("models-1") < 0; }));
  std::string log = rig.joined_log();
  INFO(log);
  CHECK(log.find("autoscale: worker models-1 out of rotation: endpoint no longer ready (readiness probe failing); it "
                 "rejoins once up, serving with the others") != std::string::npos);
  std::string m = rig.metrics();
  CHECK(metric(m, "lull_autoscale_workers_not_ready_total") == "lull_autoscale_workers_not_ready_total 1");
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 1");
  CHECK(metric(m, "lull_autoscale_workers{state=\"starting\"}") == "lull_autoscale_workers{state=\"starting\"} 1");
  {
    auto more = rig.submit(4);
    for (int slot : answered_by(more)) CHECK(slot == slot0);
  }
  // Kubernetes restarts the container (restartPolicy: Always): it is the
  // replacement, counted as starting, so the autoscaler adds no pod for it.
  CHECK(rig.load(150, 0, 1).action == ScaleDecision::Action::kNone);
  REQUIRE(rig.control("/_fake/restart-pod?name=models-1"));
  REQUIRE(rig.joined({"models-1"}));
  {
    auto more = rig.submit(4);
    answered_by(more);
  }

  // A pod lost (deleted with its node): failed; the Deployment's replacement joins.
  REQUIRE(rig.control("/_fake/lose-pod?name=models-0"));
  REQUIRE(rig.joined({"models-2"}));
  log = rig.joined_log();
  CHECK(log.find("autoscale: worker models-0 failed (up): pod left the endpoints of Service models") !=
        std::string::npos);
  CHECK(rig.scaler->slot_of("models-0") < 0);
  {
    auto more = rig.submit(4);
    answered_by(more);
  }
  m = rig.metrics();
  CHECK(metric(m, "lull_autoscale_worker_failures_total{phase=\"up\"}") ==
        "lull_autoscale_worker_failures_total{phase=\"up\"} 1");
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 2");
  CHECK(metric(m, "lull_failed_total") == "lull_failed_total 0");
  CHECK(metric(m, "lull_retried_total") == "lull_retried_total 1");  // the killed pod's batch, once

  // A pod that dies and is then lost before it is restarted failed while
  // serving, not while starting: no start backoff holds scaling.
  REQUIRE(rig.control("/_fake/kill-pod?name=models-2&restart_after_s=3600"));
  REQUIRE(rig.refresh_until([&] { return rig.scaler->slot_of("models-2") < 0; }));
  REQUIRE(rig.control("/_fake/lose-pod?name=models-2"));
  REQUIRE(rig.joined({"models-3"}));
  CHECK(rig.joined_log().find("autoscale: worker models-2 failed (up): pod left the endpoints of Service models") !=
        std::string::npos);
  m = rig.metrics();
  CHECK(metric(m, "lull_autoscale_worker_failures_total{phase=\"up\"}") ==
        "lull_autoscale_worker_failures_total{phase=\"up\"} 2");
  CHECK(metric(m, "lull_autoscale_worker_failures_total{phase=\"start\"}") ==
        "lull_autoscale_worker_failures_total{phase=\"start\"} 0");
  CHECK(metric(m, "lull_autoscale_workers_not_ready_total") == "lull_autoscale_workers_not_ready_total 2");
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 2");
  {
    auto more = rig.submit(4);
    answered_by(more);
  }
}

TEST_CASE("kubernetes serving: a pod that never becomes ready again is failed at the limit, removed and replaced",
          "[manager][kubernetes][serving][fault]") {
  KubeCluster cluster("crashloop", 50);
  cluster.not_ready_timeout_us = 60'000'000;
  KubeRig rig(cluster);
  rig.start();
  // Its container dies and is not restarted while the test runs (as in CrashLoopBackOff).
  REQUIRE(rig.control("/_fake/kill-pod?name=models-1&restart_after_s=3600"));
  REQUIRE(rig.refresh_until([&] { return rig.scaler->slot_of("models-1") < 0; }));
  CHECK(rig.load(150, 0, 1).action == ScaleDecision::Action::kNone);  // counted as starting: its own replacement
  cluster.pool_clock.advance_to_us(59'000'000);
  rig.kube().refresh();
  CHECK(find_worker(*rig.pool, "models-1").state == WorkerState::kStarting);
  cluster.pool_clock.advance_to_us(60'000'000);
  rig.kube().refresh();
  const std::string why =
      "endpoint not ready for 60 s (the not-ready limit): its container keeps failing (CrashLoopBackOff?) or its "
      "readiness probe never passes";
  CHECK(find_worker(*rig.pool, "models-1").state == WorkerState::kFailed);
  std::string log = rig.joined_log();
  INFO(log);
  CHECK(log.find("kubernetes pool: pod models-1 failed: " + why) != std::string::npos);
  CHECK(log.find("autoscale: worker models-1 failed (up): " + why) != std::string::npos);

  // The next decision removes that pod (its refresh) and adds one for the load (150 QPS: 2 workers).
  const ScaleDecision d = rig.load(150, 1, 2);
  CHECK(d.action == ScaleDecision::Action::kScaleOut);
  CHECK(d.count == 1);
  CHECK(d.reason == "forecast");
  REQUIRE(rig.joined({"models-2"}));
  const std::string m = rig.metrics();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"lull_kubernetes_pods_not_ready_timeout_total", "1"},
      {"lull_autoscale_worker_failures_total{phase=\"up\"}", "1"},
      {"lull_autoscale_workers{state=\"up\"}", "2"},
      {"lull_autoscale_workers{state=\"starting\"}", "0"}};
  for (const auto& [name, value] : expected) CHECK(metric(m, name) == name + " " + value);
  CHECK(m.find("lull_kubernetes_api_gave_up_total{") ==
        std::string::npos);  // the pod PATCH and both scales went through
  rig.serves(4);
}

TEST_CASE("kubernetes serving: a hanging API server costs each pool call its budget, decisions and serving go on",
          "[manager][kubernetes][serving][fault]") {
  KubeCluster cluster("hang", 50);
  cluster.call_budget_ms = 500;
  KubeRig rig(cluster);
  rig.start("/_fake/hang?seconds=3600&count=-1");

  // The decision comes: its refresh and its scale-out each give up at the budget.
  const ScaleDecision d = rig.load(400, 0, 1);
  REQUIRE(d.action == ScaleDecision::Action::kScaleOut);
  CHECK(d.count == 2);
  CHECK(cluster.waits_ms->empty());  // no backoff wait fit in the budget
  std::string log = rig.joined_log();
  INFO(log);
  CHECK(log.find("(attempt 1 of 5); giving up: the pool call's time budget of 500 ms is spent") != std::string::npos);
  CHECK(log.find("failed (start): Kubernetes API GET " + kScale + ": ") != std::string::npos);
  CHECK(log.find("(the pool call's time budget of 500 ms is spent); scaling on hold") != std::string::npos);
  std::string m = rig.metrics();
  CHECK(m.find(
            "lull_kubernetes_api_failed_attempts_total{method=\"GET\",resource=\"endpointslices\",status=\"0\"} 1\n") !=
        std::string::npos);
  CHECK(m.find("lull_kubernetes_api_failed_attempts_total{method=\"GET\",resource=\"scale\",status=\"0\"} 1\n") !=
        std::string::npos);
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 2");
  rig.serves(8);  // by the two pods up meanwhile

  // Answered again: after the hold the next decision scales out.
  REQUIRE(rig.control("/_fake/hang?clear=1"));
  const ScaleDecision again = rig.load(1200, 1, 4);
  REQUIRE(again.action == ScaleDecision::Action::kScaleOut);
  REQUIRE(rig.joined({"models-2", "models-3"}));
  CHECK(metric(rig.metrics(), "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 4");
  rig.serves(8);
}
