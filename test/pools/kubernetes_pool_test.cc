// The Kubernetes worker pool in process, against the in-memory API server
// (test/support/fake_kubernetes_api.h) on the fake transport: every request
// is checked there as the Kubernetes API documents it (method, path, bearer
// token, patch type, body), and the test reads back what was sent. Faults:
// 409 then 200, 500 every time (bounded retries with exponential backoff, the
// reason named), a token refused (no retry), a pod lost, a hanging API
// server. Over TLS with the Python fake: kubernetes_pool_tls_test.cc.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "test/pools/pool_test_support.h"
#include "runtime/pools/kubernetes_pool.h"
#include "test/support/fake_kubernetes_api.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::manager::testing::find_worker;
using lull::test::FakeHttpTransport;
using lull::test::FakeKubernetesApi;

namespace {
const std::string kScale = "/apis/apps/v1/namespaces/lull/deployments/models/scale";
const std::string kSlices =
    "/apis/discovery.k8s.io/v1/namespaces/lull/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dmodels";

struct Rig {
  FakeHttpTransport client;
  FakeKubernetesApi api;
  lull::core::WallClock clock;
  std::vector<std::int64_t> waits_ms;
  // One token file per process: ctest runs the cases in parallel.
  std::string dir =
      (std::filesystem::temp_directory_path() / ("lull_kubernetes_pool_test." + std::to_string(::getpid()))).string();
  std::string token = dir + "/token";
  explicit Rig(FakeKubernetesApi::Options o = {}) : api(client, o) {
    std::filesystem::create_directories(dir);
    std::ofstream(token) << FakeKubernetesApi::kToken << "\n";
  }
  ~Rig() { std::filesystem::remove_all(dir); }
  KubernetesPoolOptions options() {
    KubernetesPoolOptions o;
    o.api.server = FakeKubernetesApi::kServer;
    o.api.token_file = token;
    o.api.ca_file = "/ca.crt";
    o.api.sleep_ms = [this](std::int64_t ms) { waits_ms.push_back(ms); };
    o.ns = "lull";
    o.deployment = "models";
    o.service = "models";
    return o;
  }
  // The requests the fake received, one "METHOD PATH|CONTENT_TYPE|BODY" each.
  std::vector<std::string> log() const { return api.log(); }
};

FakeKubernetesApi::Options cluster(int replicas, int start_not_ready = 0) {
  FakeKubernetesApi::Options o;
  o.replicas = replicas;
  o.start_not_ready = start_not_ready;
  return o;
}

}  // namespace

TEST_CASE("kubernetes pool discovers pods from EndpointSlices and scales out through /scale", "[manager][kubernetes]") {
  Rig rig(cluster(2, 1));
  KubernetesPool pool(rig.client, rig.clock, rig.options());
  pool.refresh();
  INFO(pool.last_error());
  auto workers = pool.list_workers();
  REQUIRE(workers.size() == 2);
  CHECK(workers[0].id == "models-0");
  CHECK(workers[0].inference_url == "http://10.0.0.1:8080");
  CHECK(workers[0].management_url == "http://10.0.0.1:8081");
  // models-0 lists no "ready" condition (absent means ready), models-1 lists ready: true... after one listing.
  pool.refresh();
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 2);

  const auto ids = pool.start_workers(2);
  CHECK(ids == std::vector<std::string>{"pending-0", "pending-1"});
  CHECK(count_workers(pool.list_workers(), WorkerState::kStarting) == 2);
  pool.refresh();  // the new pods show, not ready yet: they replace the placeholders
  workers = pool.list_workers();
  REQUIRE(workers.size() == 4);
  CHECK(find_worker(pool, "models-2").state == WorkerState::kStarting);
  CHECK(find_worker(pool, "models-3").state == WorkerState::kStarting);
  pool.refresh();
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 4);
  CHECK(pool.last_error().empty());

  const auto log = rig.log();
  REQUIRE(log.size() >= 4);
  CHECK(log[0] == "GET " + kSlices + "||");
  CHECK(log[2] == "GET " + kScale + "||");
  CHECK(log[3] == "PATCH " + kScale + "|application/merge-patch+json|{\"spec\":{\"replicas\":4}}");
  CHECK(rig.waits_ms.empty());
}

TEST_CASE("kubernetes pool removes the very pod it drained", "[manager][kubernetes]") {
  Rig rig(cluster(3));
  KubernetesPool pool(rig.client, rig.clock, rig.options());
  std::function<void()> drained;
  pool.set_drain_hook([&](const std::string& id, std::function<void()> done) {
    CHECK(id == "models-1");
    drained = std::move(done);
  });
  pool.refresh();
  REQUIRE(count_workers(pool.list_workers(), WorkerState::kUp) == 3);
  pool.stop_worker("models-1");  // the middle one: not what a ReplicaSet removes by itself (the newest)
  CHECK(find_worker(pool, "models-1").state == WorkerState::kDraining);
  const auto before = rig.log().size();
  pool.refresh();  // not drained yet: nothing is scaled
  auto log = rig.log();
  CHECK(log.size() == before + 1);
  CHECK(find_worker(pool, "models-1").state == WorkerState::kDraining);

  drained();
  pool.refresh();
  log = rig.log();
  REQUIRE(log.size() == before + 5);
  CHECK(log[before + 1] ==
        "PATCH /api/v1/namespaces/lull/pods/models-1|application/merge-patch+json|"
        "{\"metadata\":{\"annotations\":{\"controller.kubernetes.io/pod-deletion-cost\":\"-1000\"}}}");
  CHECK(log[before + 2] == "GET " + kScale + "||");
  CHECK(log[before + 3] == "PATCH " + kScale + "|application/merge-patch+json|{\"spec\":{\"replicas\":2}}");
  CHECK(find_worker(pool, "models-1").state == WorkerState::kStopped);
  CHECK(find_worker(pool, "models-0").state == WorkerState::kUp);
  CHECK(find_worker(pool, "models-2").state == WorkerState::kUp);
}

TEST_CASE("kubernetes pool: 409 Conflict then 200 is retried once after the first backoff",
          "[manager][kubernetes][fault]") {
  Rig rig;
  rig.api.fail("PATCH", 409, 1);
  KubernetesPool pool(rig.client, rig.clock, rig.options());
  const auto ids = pool.start_workers(1);
  CHECK(find_worker(pool, ids[0]).state == WorkerState::kStarting);
  CHECK(pool.last_error().empty());
  CHECK(rig.waits_ms == std::vector<std::int64_t>{200});
  const auto log = rig.log();
  REQUIRE(log.size() == 3);
  CHECK(log[1] == log[2]);  // the same PATCH again
  CHECK(log[2] == "PATCH " + kScale + "|application/merge-patch+json|{\"spec\":{\"replicas\":3}}");
}

TEST_CASE("kubernetes pool: 500 every time gives up after bounded backoff and says why",
          "[manager][kubernetes][fault]") {
  Rig rig;
  rig.api.fail("PATCH", 500, 100);
  auto o = rig.options();
  o.api.backoff_max_ms = 500;
  KubernetesPool pool(rig.client, rig.clock, o);
  const auto ids = pool.start_workers(2);
  const std::string why =
      "Kubernetes API PATCH " + kScale + ": HTTP 500 InternalError: etcdserver: request timed out (after 5 attempts)";
  CHECK(rig.waits_ms == std::vector<std::int64_t>{200, 400, 500, 500});
  for (const auto& id : ids) {
    CHECK(find_worker(pool, id).state == WorkerState::kFailed);
    CHECK(find_worker(pool, id).failure == why);
  }
  CHECK(pool.last_error() == why);
  CHECK(rig.log().size() == 1 + 5);  // one GET, five PATCHes
  // The pool keeps serving with what is up.
  pool.refresh();
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 2);
}

TEST_CASE("kubernetes pool: a refused token is not retried, a missing token file is named",
          "[manager][kubernetes][fault]") {
  Rig rig;
  const std::string wrong_token = rig.dir + "/wrong-token";
  std::ofstream(wrong_token) << "nope\n";
  auto o = rig.options();
  o.api.token_file = wrong_token;
  KubernetesPool pool(rig.client, rig.clock, o);
  pool.refresh();
  CHECK(pool.last_error() == "Kubernetes API GET " + kSlices + ": HTTP 401 Unauthorized: Unauthorized");
  CHECK(rig.waits_ms.empty());
  CHECK(pool.list_workers().empty());
  CHECK(rig.log().size() == 1);
  // Counted for /metrics: one failed attempt, given up at once.
  const std::string m = pool.metrics_text();
  CHECK(m.find("\nlull_kubernetes_api_failed_attempts_total{method=\"GET\",resource=\"endpointslices\",status=\"401\"} "
               "1\n") != std::string::npos);
  CHECK(m.find("\nlull_kubernetes_api_gave_up_total{method=\"GET\",resource=\"endpointslices\"} 1\n") !=
        std::string::npos);
  CHECK(m.find("\nlull_kubernetes_api_last_error_info{reason=\"GET endpointslices: HTTP 401 Unauthorized: "
               "Unauthorized\"} 1\n") != std::string::npos);

  auto o3 = rig.options();
  o3.api.token_file = rig.dir + "/missing";
  KubernetesPool no_token(rig.client, rig.clock, o3);
  no_token.refresh();
  CHECK(no_token.last_error() == rig.dir + "/missing: cannot read the service account token");
}

TEST_CASE("kubernetes pool: a pod that leaves the endpoints unasked is failed, a stopped placeholder lowers the count",
          "[manager][kubernetes][fault]") {
  Rig rig(cluster(2));
  KubernetesPool pool(rig.client, rig.clock, rig.options());
  pool.refresh();
  rig.api.lose_pod("models-0");
  pool.refresh();
  CHECK(find_worker(pool, "models-0").state == WorkerState::kFailed);
  CHECK(find_worker(pool, "models-0").failure == "pod left the endpoints of Service models");
  CHECK(find_worker(pool, "models-2").state == WorkerState::kUp);  // the Deployment's replacement

  const auto ids = pool.start_workers(1);
  pool.stop_worker(ids[0]);  // asked for, then not wanted before its pod showed
  pool.refresh();
  CHECK(find_worker(pool, ids[0]).state == WorkerState::kStopped);
  const auto log = rig.log();
  CHECK(log[log.size() - 2] == "PATCH " + kScale + "|application/merge-patch+json|{\"spec\":{\"replicas\":2}}");
}

TEST_CASE("kubernetes pool: a drained pod is scaled away only once no other pod is starting", "[manager][kubernetes]") {
  // A ReplicaSet removes a not-ready pod before it weighs deletion costs
  // (the fake does the same): scaling in while a new pod starts would remove the new pod.
  Rig rig(cluster(2, 2));
  KubernetesPool pool(rig.client, rig.clock, rig.options());
  pool.refresh();
  REQUIRE(count_workers(pool.list_workers(), WorkerState::kUp) == 2);
  pool.start_workers(1);
  pool.refresh();  // models-2 shows, not ready (one more listing to go)
  REQUIRE(find_worker(pool, "models-2").state == WorkerState::kStarting);
  pool.stop_worker("models-0");  // no drain hook: drained at once
  pool.refresh();                // models-2 still not ready: models-0 must wait (lowering now would remove models-2)
  CHECK(find_worker(pool, "models-0").state == WorkerState::kDraining);
  CHECK(find_worker(pool, "models-2").state == WorkerState::kStarting);
  pool.refresh();  // models-2 is ready in this listing
  CHECK(find_worker(pool, "models-0").state == WorkerState::kDraining);
  CHECK(find_worker(pool, "models-2").state == WorkerState::kUp);
  pool.refresh();  // now models-0 goes
  CHECK(find_worker(pool, "models-0").state == WorkerState::kStopped);
  CHECK(find_worker(pool, "models-1").state == WorkerState::kUp);
  CHECK(find_worker(pool, "models-2").state == WorkerState::kUp);
}

TEST_CASE("kubernetes pool: a pod lost while draining still lowers the count once", "[manager][kubernetes][fault]") {
  Rig rig(cluster(3));
  KubernetesPool pool(rig.client, rig.clock, rig.options());
  std::function<void()> drained;
  pool.set_drain_hook([&](const std::string&, std::function<void()> done) { drained = std::move(done); });
  pool.refresh();
  pool.stop_worker("models-1");
  rig.api.lose_pod("models-1");  // the Deployment replaces it with models-3
  pool.refresh();
  CHECK(find_worker(pool, "models-1").state == WorkerState::kStopped);  // it was going anyway
  drained();
  pool.refresh();
  CHECK(pool.last_error().empty());
  const auto log = rig.log();
  REQUIRE(log.size() >= 4);
  CHECK(log[log.size() - 4].find("PATCH /api/v1/namespaces/lull/pods/models-1|") == 0);  // 404: gone
  CHECK(log[log.size() - 2] == "PATCH " + kScale + "|application/merge-patch+json|{\"spec\":{\"replicas\":2}}");
  pool.refresh();  // nothing more to scale
  CHECK(rig.log().size() == log.size() + 1);
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 2);
}

TEST_CASE("kubernetes pool: a pod not ready past the limit is failed, counted, and its pod scaled away",
          "[manager][kubernetes][fault]") {
  // New pods stay not ready (a container in CrashLoopBackOff); the clock is
  // virtual, so the limit is crossed exactly.
  Rig rig(cluster(2, 1000000));
  lull::core::VirtualClock clock;
  auto o = rig.options();
  o.not_ready_timeout_us = 60'000'000;
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  KubernetesPool pool(rig.client, clock, o);
  pool.refresh();
  REQUIRE(count_workers(pool.list_workers(), WorkerState::kUp) == 2);
  clock.advance_to_us(1'000'000);
  pool.start_workers(1);
  pool.refresh();  // models-2 shows, not ready, from t = 1 s
  REQUIRE(find_worker(pool, "models-2").state == WorkerState::kStarting);
  clock.advance_to_us(60'999'999);
  pool.refresh();
  CHECK(find_worker(pool, "models-2").state == WorkerState::kStarting);
  CHECK(lines.empty());
  clock.advance_to_us(61'000'000);
  pool.refresh();
  const std::string why =
      "endpoint not ready for 60 s (the not-ready limit): its container keeps failing (CrashLoopBackOff?) or its "
      "readiness probe never passes";
  CHECK(find_worker(pool, "models-2").state == WorkerState::kFailed);
  CHECK(find_worker(pool, "models-2").failure == why);
  CHECK(lines == std::vector<std::string>{"kubernetes pool: pod models-2 failed: " + why +
                                          "; marked to be removed and the replica count lowered once no other pod "
                                          "is starting"});
  CHECK(pool.metrics_text().find("\nlull_kubernetes_pods_not_ready_timeout_total 1\n") != std::string::npos);

  // The next refresh removes that very pod: marked, then the count lowered.
  const auto before = rig.log().size();
  pool.refresh();
  auto log = rig.log();
  REQUIRE(log.size() == before + 4);
  CHECK(log[before] ==
        "PATCH /api/v1/namespaces/lull/pods/models-2|application/merge-patch+json|"
        "{\"metadata\":{\"annotations\":{\"controller.kubernetes.io/pod-deletion-cost\":\"-1000\"}}}");
  CHECK(log[before + 2] == "PATCH " + kScale + "|application/merge-patch+json|{\"spec\":{\"replicas\":2}}");
  CHECK(find_worker(pool, "models-2").state == WorkerState::kFailed);  // gone from the endpoints: still failed
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 2);
  CHECK(count_workers(pool.list_workers(), WorkerState::kStarting) == 0);
  pool.refresh();  // nothing more to scale
  CHECK(rig.log().size() == log.size() + 1);
  CHECK(lines.size() == 1);
  CHECK(pool.last_error().empty());
}

TEST_CASE("kubernetes pool: a hanging API server costs a pool call at most its time budget",
          "[manager][kubernetes][fault]") {
  Rig rig(cluster(2));
  auto o = rig.options();
  o.api.sequence_budget_ms = 1000;  // below one attempt's own timeout (10 s)
  KubernetesPool pool(rig.client, rig.clock, o);
  pool.refresh();
  REQUIRE(count_workers(pool.list_workers(), WorkerState::kUp) == 2);
  rig.api.hang(-1);
  auto before = rig.log().size();
  pool.refresh();  // without the budget: 5 attempts of 10 s each
  INFO(pool.last_error());
  CHECK(rig.log().size() == before + 1);  // one attempt
  CHECK(pool.last_error().find("Kubernetes API GET " + kSlices + ": ") == 0);
  CHECK(pool.last_error().find("(the pool call's time budget of 1000 ms is spent)") != std::string::npos);
  CHECK(rig.waits_ms.empty());                                       // no wait and attempt fit in what was left
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 2);  // as last known
  std::string m = pool.metrics_text();
  CHECK(
      m.find(
          "\nlull_kubernetes_api_failed_attempts_total{method=\"GET\",resource=\"endpointslices\",status=\"0\"} 1\n") !=
      std::string::npos);
  CHECK(m.find("\nlull_kubernetes_api_gave_up_total{method=\"GET\",resource=\"endpointslices\"} 1\n") !=
        std::string::npos);

  // A scale-out while it hangs: the workers asked for fail with that reason.
  before = rig.log().size();
  const auto ids = pool.start_workers(1);
  CHECK(find_worker(pool, ids[0]).state == WorkerState::kFailed);
  CHECK(find_worker(pool, ids[0]).failure.find("Kubernetes API GET " + kScale + ": ") == 0);
  CHECK(find_worker(pool, ids[0]).failure.find("time budget of 1000 ms is spent") != std::string::npos);
  CHECK(rig.log().size() == before + 1);

  // Answered again: the next pool call works as before.
  rig.api.hang(0);
  pool.start_workers(1);
  pool.refresh();
  CHECK(count_workers(pool.list_workers(), WorkerState::kUp) == 3);
}

TEST_CASE("kubernetes pool: retries stop when the pool call's time budget leaves no room for the next wait",
          "[manager][kubernetes][fault]") {
  // 500 every time; backoff 200, 400, 800, 1600 ms (recorded, counted
  // against the budget as if slept): with 2000 ms, the fourth wait does not fit.
  Rig rig;
  rig.api.fail("PATCH", 500, 100);
  auto o = rig.options();
  o.api.sequence_budget_ms = 2000;
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  KubernetesPool pool(rig.client, rig.clock, o);
  const auto ids = pool.start_workers(1);
  CHECK(rig.waits_ms == std::vector<std::int64_t>{200, 400, 800});
  CHECK(find_worker(pool, ids[0]).failure ==
        "Kubernetes API PATCH " + kScale +
            ": HTTP 500 InternalError: etcdserver: request timed out (after 4 attempts; the pool call's time budget "
            "of 2000 ms is spent)");
  REQUIRE(lines.size() == 4);
  CHECK(lines[3] == "kubernetes API: PATCH " + kScale +
                        ": HTTP 500 InternalError: etcdserver: request timed out (attempt 4 of 5); giving up: the pool "
                        "call's time budget of 2000 ms is spent");
  CHECK(rig.log().size() == 1 + 4);  // one GET, four PATCHes
}

TEST_CASE("kubernetes pool: each lull shard scales its own Deployment and sees only its own pods",
          "[manager][kubernetes][shard]") {
  // One API server holding shard 0's and shard 1's Deployments and Services
  // (models-0, models-1: docs/operators-guide.md, `--k8s-deployment models-{shard}`).
  FakeKubernetesApi::Options o0 = cluster(2), o1 = cluster(1);
  o0.name = "models-0";
  o1.name = "models-1";
  o1.subnet = 1;
  FakeKubernetesApi shard0(o0), shard1(o1);
  Rig rig;
  rig.client.fallback([&](const lull::net::HttpRequest& r) {
    return r.url.find("models-1") != std::string::npos ? shard1.answer(r) : shard0.answer(r);
  });
  std::vector<std::unique_ptr<KubernetesPool>> pools;
  for (const char* name : {"models-0", "models-1"}) {
    auto o = rig.options();
    o.deployment = o.service = name;
    pools.push_back(std::make_unique<KubernetesPool>(rig.client, rig.clock, o));
    pools.back()->refresh();
  }
  CHECK(count_workers(pools[0]->list_workers(), WorkerState::kUp) == 2);
  CHECK(count_workers(pools[1]->list_workers(), WorkerState::kUp) == 1);
  pools[1]->start_workers(2);
  pools[1]->refresh();
  pools[0]->refresh();
  INFO(pools[1]->last_error());
  CHECK(count_workers(pools[1]->list_workers(), WorkerState::kUp) == 3);
  CHECK(count_workers(pools[0]->list_workers(), WorkerState::kUp) == 2);
  for (const auto& w : pools[1]->list_workers()) {
    CHECK(w.id.rfind("models-1-", 0) == 0);
    CHECK(w.inference_url.rfind("http://10.0.1.", 0) == 0);
  }
  for (const auto& w : pools[0]->list_workers()) CHECK(w.id.rfind("models-0-", 0) == 0);
  // Shard 1's scale-out went to its Deployment only.
  for (const auto& line : shard0.log()) CHECK(line.rfind("PATCH", 0) != 0);
  bool patched = false;
  for (const auto& line : shard1.log())
    patched = patched || line ==
                             "PATCH /apis/apps/v1/namespaces/lull/deployments/models-1/scale|"
                             "application/merge-patch+json|{\"spec\":{\"replicas\":3}}";
  CHECK(patched);
}
