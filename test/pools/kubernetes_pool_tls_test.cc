// The Kubernetes worker pool over real TLS, against the Python fake API
// server (fake_kube_api.py, with a CA made for the test): the one thing the
// in-process tests (kubernetes_pool_test.cc) cannot show, that a CA which
// does not sign the API server fails every attempt, counted as no answer.
#include <catch2/catch.hpp>

#include <string>

#include "test/support/fake_kube_support.h"
#include "runtime/pools/kubernetes_pool.h"
#include "runtime/net/http_client.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::manager::testing::fake_api;
using lull::manager::testing::secrets;

TEST_CASE("kubernetes pool over TLS: the right CA gets through, a CA that does not sign the server fails TLS",
          "[manager][kubernetes][fault]") {
  const std::string slices =
      "/apis/discovery.k8s.io/v1/namespaces/lull/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dmodels";
  auto api = fake_api({"--replicas", "2"});
  lull::net::HttpClient client;
  lull::core::WallClock clock;
  KubernetesPoolOptions o;
  o.api.server = "https://127.0.0.1:" + std::to_string(api.port());
  o.api.token_file = secrets().token;
  o.api.ca_file = secrets().cert;
  o.api.sleep_ms = [](std::int64_t) {};
  o.api.max_attempts = 2;
  o.ns = "lull";
  o.deployment = "models";
  o.service = "models";
  KubernetesPool trusted(client, clock, o);
  trusted.refresh();
  INFO(trusted.last_error());
  CHECK(trusted.last_error().empty());
  CHECK(count_workers(trusted.list_workers(), WorkerState::kUp) == 2);

  o.api.ca_file = secrets().other_cert;
  KubernetesPool untrusted(client, clock, o);
  untrusted.refresh();
  INFO(untrusted.last_error());
  CHECK(untrusted.last_error().find("Kubernetes API GET " + slices + ": ") == 0);
  CHECK(untrusted.last_error().find("(after 2 attempts)") != std::string::npos);
  CHECK(
      untrusted.metrics_text().find(
          "\nlull_kubernetes_api_failed_attempts_total{method=\"GET\",resource=\"endpointslices\",status=\"0\"} 2\n") !=
      std::string::npos);  // no answer: status 0, each attempt counted
  CHECK(untrusted.list_workers().empty());
}
