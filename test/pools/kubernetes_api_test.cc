// The Kubernetes API client's retry rules, in process over the fake
// transport (test/support/fake_http_transport.h): which answers are retried,
// after which waits, what the error says, and what each request carries.
// kubernetes_pool_test.cc runs the pool against an in-memory API server,
// kubernetes_api_abuse_test.cc against a hostile one.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "runtime/pools/kubernetes_api.h"
#include "test/support/fake_http_transport.h"

using lull::net::HttpRequest;
using lull::net::HttpResponse;
using lull::pools::KubernetesApi;
using lull::pools::KubernetesApiError;
using lull::pools::KubernetesApiOptions;
using lull::test::FakeHttpTransport;

namespace {

const std::string kServer = "https://10.0.0.1:6443";
const std::string kScale = "/apis/apps/v1/namespaces/lull/deployments/models/scale";

struct Rig {
  FakeHttpTransport http;
  std::vector<std::int64_t> waits_ms;
  // One file per process: ctest runs the cases in parallel.
  std::string token_file =
      (std::filesystem::temp_directory_path() / ("lull_kubernetes_api_test." + std::to_string(::getpid()) + ".token"))
          .string();
  Rig() { std::ofstream(token_file) << "TOKEN-1\n"; }
  ~Rig() { std::remove(token_file.c_str()); }
  KubernetesApiOptions options() {
    KubernetesApiOptions o;
    o.server = kServer;
    o.token_file = token_file;
    o.ca_file = "/ca.crt";
    o.sleep_ms = [this](std::int64_t ms) { waits_ms.push_back(ms); };
    return o;
  }
};

std::string status_body(int code, const std::string& reason, const std::string& message) {
  return "{\"kind\":\"Status\",\"code\":" + std::to_string(code) + ",\"reason\":\"" + reason + "\",\"message\":\"" +
         message + "\"}";
}

}  // namespace

TEST_CASE("Kubernetes API: 409 Conflict then 200 is retried once after the first backoff",
          "[manager][kubernetes][fault]") {
  Rig rig;
  int calls = 0;
  rig.http.route("PATCH", kServer + kScale, [&](const HttpRequest&) {
    return ++calls == 1 ? FakeHttpTransport::reply(409, status_body(409, "Conflict", "the object has been modified"))
                        : FakeHttpTransport::reply(200, "{}");
  });
  KubernetesApi api(rig.http, rig.options());
  api.set_replicas("lull", "models", 3);
  CHECK(rig.waits_ms == std::vector<std::int64_t>{200});
  const auto sent = rig.http.requests();
  REQUIRE(sent.size() == 2);
  for (const auto& r : sent) {  // the same PATCH again, as the API documents it
    CHECK(r.method == "PATCH");
    CHECK(r.content_type == "application/merge-patch+json");
    CHECK(r.body == "{\"spec\":{\"replicas\":3}}");
    CHECK(r.bearer_token == "TOKEN-1");
    CHECK(r.ca_file == "/ca.crt");
  }
}

TEST_CASE("Kubernetes API: 500 every time gives up after bounded backoff and says why",
          "[manager][kubernetes][fault]") {
  Rig rig;
  rig.http.route("PATCH", kServer + kScale, [](const HttpRequest&) {
    return FakeHttpTransport::reply(500, status_body(500, "InternalError", "etcdserver: request timed out"));
  });
  auto o = rig.options();
  o.backoff_max_ms = 500;
  KubernetesApi api(rig.http, o);
  try {
    api.set_replicas("lull", "models", 2);
    FAIL("no error");
  } catch (const KubernetesApiError& e) {
    CHECK(std::string(e.what()) == "Kubernetes API PATCH " + kScale +
                                       ": HTTP 500 InternalError: etcdserver: request timed out (after 5 attempts)");
    CHECK(e.status == 500);
  }
  CHECK(rig.waits_ms == std::vector<std::int64_t>{200, 400, 500, 500});
  CHECK(rig.http.requests().size() == 5);
}

TEST_CASE("Kubernetes API: a refused token is not retried, no answer is", "[manager][kubernetes][fault]") {
  Rig rig;
  rig.http.route("GET", kServer + kScale, [](const HttpRequest&) {
    return FakeHttpTransport::reply(401, status_body(401, "Unauthorized", "Unauthorized"));
  });
  KubernetesApi api(rig.http, rig.options());
  CHECK_THROWS_WITH(api.get_replicas("lull", "models"), Catch::Contains("HTTP 401 Unauthorized"));
  CHECK(rig.http.requests().size() == 1);
  CHECK(rig.waits_ms.empty());

  // No route for the pods: "Connection refused", a reason that may pass.
  api.begin_sequence();
  CHECK_THROWS_WITH(api.mark_pod_for_removal("lull", "models-1"), Catch::Contains("Connection refused"));
  CHECK(rig.http.requests().size() == 1 + 5);
  CHECK(rig.waits_ms.size() == 4);
}

TEST_CASE("Kubernetes API: the replica count is read from the scale subresource", "[manager][kubernetes]") {
  Rig rig;
  rig.http.route("GET", kServer + kScale, [](const HttpRequest&) {
    return FakeHttpTransport::reply(200, "{\"kind\":\"Scale\",\"spec\":{\"replicas\":4}}");
  });
  KubernetesApi api(rig.http, rig.options());
  CHECK(api.get_replicas("lull", "models") == 4);
  CHECK(rig.http.requests().at(0).url == kServer + kScale);
}
