// The Kubernetes API client against a hostile API server (docs/operators-guide.md,
// "Kubernetes API abuse"): malformed JSON, fields of the wrong type, replica
// counts and ports out of range, addresses and pod names that are not ones,
// 100k endpoints with duplicates, bodies over the cap, redirects elsewhere,
// slow-loris answers, and a stop during a backoff wait. In process over the
// fake transport; the cap, the redirect and the slow-loris answer also over a
// real loopback socket through libcurl ([process]).
#include <catch2/catch.hpp>

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/pools/kubernetes_api.h"
#include "runtime/pools/kubernetes_objects.h"
#include "runtime/pools/kubernetes_pool.h"
#include "runtime/net/http_client.h"
#include "test/support/fake_http_transport.h"
#include "test/support/loopback_http_server.h"

using lull::net::HttpRequest;
using lull::pools::KubernetesApi;
using lull::pools::KubernetesApiError;
using lull::pools::KubernetesApiOptions;
using lull::pools::KubernetesPool;
using lull::pools::KubernetesPoolOptions;
using lull::test::FakeHttpTransport;
using lull::test::LoopbackHttpServer;

namespace {

const std::string kServer = "https://10.0.0.1:6443";
const std::string kScale = "/apis/apps/v1/namespaces/lull/deployments/models/scale";
const std::string kSlices =
    "/apis/discovery.k8s.io/v1/namespaces/lull/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dmodels";
const std::string kSlicesPath = "/apis/discovery.k8s.io/v1/namespaces/lull/endpointslices";

struct Rig {
  FakeHttpTransport http;
  std::vector<std::int64_t> waits_ms;
  std::string token_file =
      (std::filesystem::temp_directory_path() / ("lull_kubernetes_abuse_test." + std::to_string(::getpid()) + ".token"))
          .string();
  Rig() { std::ofstream(token_file) << "TOKEN-1\n"; }
  ~Rig() { std::remove(token_file.c_str()); }
  KubernetesApiOptions options(const std::string& server = kServer) {
    KubernetesApiOptions o;
    o.server = server;
    o.token_file = token_file;
    o.ca_file = "";
    o.sleep_ms = [this](std::int64_t ms) { waits_ms.push_back(ms); };
    return o;
  }
  void scale_answers(const std::string& body) {
    http.route("GET", kServer + kScale, [body](const HttpRequest&) { return FakeHttpTransport::reply(200, body); });
  }
  void slices_answer(const std::string& body) {
    http.route("GET", kServer + kSlicesPath,
               [body](const HttpRequest&) { return FakeHttpTransport::reply(200, body); });
  }
};

std::string slice_list(const std::string& ports, const std::string& endpoints) {
  return R"({"kind":"EndpointSliceList","items":[{"ports":)" + ports + R"(,"endpoints":)" + endpoints + "}]}";
}
const std::string kPorts = R"([{"name":"http","port":8080}])";
std::string endpoint(const std::string& pod, const std::string& ip) {
  return R"({"addresses":[")" + ip + R"("],"targetRef":{"name":")" + pod + R"("}})";
}

std::string replicas_error(Rig& rig, const std::string& body) {
  rig.scale_answers(body);
  KubernetesApi api(rig.http, rig.options());
  try {
    const int n = api.get_replicas("lull", "models");
    return "no error: " + std::to_string(n);
  } catch (const KubernetesApiError& e) {
    return e.what();
  }
}

std::string slices_error(Rig& rig, const std::string& body) {
  rig.slices_answer(body);
  KubernetesApi api(rig.http, rig.options());
  std::vector<std::pair<std::string, int>> ports;
  try {
    const auto eps = api.list_endpoints("lull", "models", &ports);
    return "no error: " + std::to_string(eps.size()) + " endpoints";
  } catch (const KubernetesApiError& e) {
    return e.what();
  }
}

// The i-th of 2^16 x 4 addresses in 10.0.0.0/8, in set `set` (0..3).
std::string ip_of(int set, int i) {
  return "10." + std::to_string(set * 4 + i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
         std::to_string(i % 256);
}

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

TEST_CASE("Kubernetes API abuse: malformed JSON is an error naming the call, never a count",
          "[manager][kubernetes][abuse]") {
  Rig rig;
  for (const std::string body : {"", "{", "not json", "[1,2]", "null", "{\"spec\":", "\"spec\""}) {
    INFO(body);
    CHECK(replicas_error(rig, body).find("Kubernetes API GET " + kScale + ": ") == 0);
    CHECK(slices_error(rig, body).find("Kubernetes API GET " + kSlices + ": ") == 0);
  }
  CHECK(replicas_error(rig, "{") == "Kubernetes API GET " + kScale + ": the answer is not JSON");
  CHECK(replicas_error(rig, "{\"kind\":\"Scale\"}") == "Kubernetes API GET " + kScale + ": no spec in the answer");
  CHECK(slices_error(rig, "{\"items\":{}}") == "Kubernetes API GET " + kSlices + ": no items list in the answer");
  // A million brackets (2 MB): refused at once; protobuf's parser ran for minutes on it (900 MB).
  const std::string deep = "{\"items\":" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  CHECK(slices_error(rig, deep) == "Kubernetes API GET " + kSlices + ": the answer is not JSON");
  CHECK(slices_error(rig, "{\"items\":[{\"ports\":" + std::string(64, '[') + std::string(64, ']') + "}]}")
            .find(": the answer is not JSON") != std::string::npos);
  // Brackets inside strings do not count.
  CHECK(slices_error(rig, "{\"items\":[],\"x\":\"" + std::string(1000, '[') + "\\\"\"}") == "no error: 0 endpoints");
}

TEST_CASE("Kubernetes API abuse: a replica count of the wrong type or out of range is refused naming spec.replicas",
          "[manager][kubernetes][abuse]") {
  Rig rig;
  const std::string at = "Kubernetes API GET " + kScale + ": spec.replicas: ";
  CHECK(replicas_error(rig, R"({"spec":{"replicas":"3"}})") == at + "not a number");
  CHECK(replicas_error(rig, R"({"spec":{"replicas":true}})") == at + "not a number");
  CHECK(replicas_error(rig, R"({"spec":{"replicas":[3]}})") == at + "not a number");
  CHECK(replicas_error(rig, R"({"spec":{"replicas":-5}})") ==
        at + "-5 is not a replica count (an integer 0..2147483647)");
  CHECK(replicas_error(rig, R"({"spec":{"replicas":2.5}})") ==
        at + "2.5 is not a replica count (an integer 0..2147483647)");
  CHECK(replicas_error(rig, R"({"spec":{"replicas":1e300}})") ==
        at + "1.0000000000000001e+300 is not a replica count (an integer 0..2147483647)");
  CHECK(replicas_error(rig, R"({"spec":{"replicas":2147483648}})") ==
        at + "2147483648 is not a replica count (an integer 0..2147483647)");
  CHECK(replicas_error(rig, R"({"spec":"four"})") == "Kubernetes API GET " + kScale + ": spec: not an object");
  // What a real API server sends still reads.
  CHECK(replicas_error(rig, R"({"spec":{"replicas":2147483647}})") == "no error: 2147483647");
  CHECK(replicas_error(rig, R"({"spec":{}})") == "no error: 0");
  CHECK(replicas_error(rig, R"({"spec":{"replicas":null}})") == "no error: 0");
}

TEST_CASE("Kubernetes API abuse: a scale-out past the API's int32 count is refused, not wrapped",
          "[manager][kubernetes][abuse]") {
  Rig rig;
  rig.scale_answers(R"({"spec":{"replicas":2147483646}})");
  rig.http.route("PATCH", kServer + kScale, [](const HttpRequest&) { return FakeHttpTransport::reply(200, "{}"); });
  lull::core::VirtualClock clock;
  KubernetesPoolOptions o;
  o.api = rig.options();
  o.ns = "lull";
  o.deployment = "models";
  o.service = "models";
  KubernetesPool pool(rig.http, clock, o);
  const auto ids = pool.start_workers(2);
  REQUIRE(ids.size() == 2);
  CHECK(pool.last_error() ==
        "Kubernetes Deployment models: 2147483646 replicas + 2 is over the API's limit of 2147483647");
  for (const auto& r : rig.http.requests()) CHECK(r.method == "GET");  // no PATCH with a wrapped count
}

TEST_CASE(
    "Kubernetes API abuse: ports, addresses, pod names and conditions of the wrong kind are refused naming "
    "the field",
    "[manager][kubernetes][abuse]") {
  Rig rig;
  const std::string at = "Kubernetes API GET " + kSlices + ": items[0].";
  const std::string ep = "[" + endpoint("models-0", "10.0.0.1") + "]";
  CHECK(slices_error(rig, slice_list(R"([{"name":"http","port":-1}])", ep)) ==
        at + "ports[0].port: -1 is not a port (1..65535)");
  CHECK(slices_error(rig, slice_list(R"([{"name":"http","port":70000}])", ep)) ==
        at + "ports[0].port: 70000 is not a port (1..65535)");
  CHECK(slices_error(rig, slice_list(R"([{"name":"http","port":1e20}])", ep)) ==
        at + "ports[0].port: 1e+20 is not a port (1..65535)");
  CHECK(slices_error(rig, slice_list(R"([{"name":"http","port":"8080"}])", ep)) == at + "ports[0].port: not a number");
  CHECK(slices_error(rig, slice_list(R"([{"name":7,"port":8080}])", ep)) == at + "ports[0].name: not a string");
  CHECK(slices_error(rig, slice_list(R"({"http":8080})", ep)) == at + "ports: not a list");
  CHECK(slices_error(rig, slice_list(kPorts, R"({"a":1})")) == at + "endpoints: not a list");
  CHECK(slices_error(rig, slice_list(kPorts, R"([{"addresses":"10.0.0.1"}])")) ==
        at + "endpoints[0].addresses: not a list");
  CHECK(slices_error(rig, slice_list(kPorts, R"([{"addresses":[167772161]}])")) ==
        at + "endpoints[0].addresses[0]: not a string");
  // An address goes into a worker's URL: only an IP literal may.
  CHECK(slices_error(rig, slice_list(kPorts, "[" + endpoint("models-0", "evil.example:80/x#") + "]")) ==
        at + "endpoints[0].addresses[0]: 'evil.example:80/x#' is not an IPv4 or IPv6 address");
  // inet_pton stops at a NUL: the rest must not ride along into the URL (found by fuzz_kubernetes_objects).
  CHECK(slices_error(rig, slice_list(kPorts, R"([{"addresses":["10.0.0.2\u0000/evil"]}])"))
            .find(at + "endpoints[0].addresses[0]: '10.0.0.2") == 0);
  // A pod name goes into a PATCH path: "../" must not reach another object.
  CHECK(slices_error(rig, slice_list(kPorts, "[" + endpoint("../../../apis/apps/v1/x", "10.0.0.1") + "]")) ==
        at + "endpoints[0].targetRef.name: '../../../apis/apps/v1/x' is not a pod name (a DNS-1123 subdomain)");
  CHECK(slices_error(rig, slice_list(kPorts, R"([{"addresses":["10.0.0.1"],"conditions":{"ready":"yes"}}])")) ==
        at + "endpoints[0].conditions.ready: not a bool");
  CHECK(slices_error(rig, slice_list(kPorts, R"([{"addresses":["10.0.0.1"],"targetRef":"models-0"}])")) ==
        at + "endpoints[0].targetRef: not an object");
  CHECK(slices_error(rig, R"({"items":[7]})") == "Kubernetes API GET " + kSlices + ": items[0]: not an object");
  // Nulls where the API may send them, and an IPv6 endpoint, still read.
  CHECK(slices_error(rig, slice_list(kPorts, "null")) == "no error: 0 endpoints");
  CHECK(slices_error(rig, slice_list(R"([{"name":"all","port":null},{"name":"http","port":8080}])",
                                     "[" + endpoint("models-0", "fd00::1") + "]")) == "no error: 1 endpoints");
}

TEST_CASE("Kubernetes API abuse: 100k endpoints with every pod listed twice read once each, in O(n log n)",
          "[manager][kubernetes][abuse]") {
  // ~13 MB of slices; a pod in two slices keeps its first entry. The old
  // dedup compared each endpoint with every one kept: 5e9 string compares.
  constexpr int kPods = 100'000;
  std::string eps = "[";
  for (int copy = 0; copy < 2; ++copy)
    for (int i = 0; i < kPods; ++i) {
      if (eps.size() > 1) eps += ",";
      eps += endpoint("models-" + std::to_string(i), ip_of(copy, i));
    }
  eps += "]";
  Rig rig;
  rig.slices_answer(slice_list(kPorts, eps));
  KubernetesApi api(rig.http, rig.options());
  std::vector<std::pair<std::string, int>> ports;
  const double cpu0 = thread_cpu_s();
  const auto list = api.list_endpoints("lull", "models", &ports);
  const double cpu_s = thread_cpu_s() - cpu0;
  REQUIRE(list.size() == static_cast<std::size_t>(kPods));
  CHECK(list.front().pod == "models-0");
  CHECK(list.front().address == "10.0.0.0");  // the first copy
  CHECK(list.back().pod == "models-99999");
  CHECK(ports == std::vector<std::pair<std::string, int>>{{"http", 8080}});
  // This thread's CPU time (not wall time: the verdict must not depend on
  // the machine's load): about a second in a sanitizer build, a minute with the quadratic dedup.
  CHECK(cpu_s < 15);
}

TEST_CASE("Kubernetes API abuse: a pool with 100k pods refreshes without a quadratic pass",
          "[manager][kubernetes][abuse]") {
  constexpr int kPods = 100'000;
  std::string eps = "[";
  for (int i = 0; i < kPods; ++i) {
    if (i) eps += ",";
    eps += endpoint("models-" + std::to_string(i), ip_of(0, i));
  }
  eps += "]";
  Rig rig;
  rig.slices_answer(slice_list(kPorts, eps));
  lull::core::VirtualClock clock;
  KubernetesPoolOptions o;
  o.api = rig.options();
  o.ns = "lull";
  o.deployment = "models";
  o.service = "models";
  KubernetesPool pool(rig.http, clock, o);
  const double cpu0 = thread_cpu_s();
  pool.refresh();
  pool.refresh();  // the second pass matches every endpoint to a known pod
  const double cpu_s = thread_cpu_s() - cpu0;
  INFO(pool.last_error());
  CHECK(pool.last_error().empty());
  CHECK(count_workers(pool.list_workers(), lull::manager::WorkerState::kUp) == kPods);
  CHECK(cpu_s < 15);
}

TEST_CASE("Kubernetes API abuse: a body over the cap is refused with the cap named, not buffered",
          "[manager][kubernetes][abuse]") {
  Rig rig;
  rig.slices_answer(std::string(2 << 20, ' ') + "{}");
  auto o = rig.options();
  o.max_response_bytes = 1 << 20;
  KubernetesApi api(rig.http, o);
  std::vector<std::pair<std::string, int>> ports;
  CHECK_THROWS_WITH(api.list_endpoints("lull", "models", &ports),
                    "Kubernetes API GET " + kSlices + ": response body over the cap of 1048576 bytes");
  CHECK(rig.http.requests().size() == 1);  // not retried: the next answer would be as large
  CHECK(rig.http.requests()[0].max_response_bytes == 1 << 20);
  CHECK(KubernetesApiOptions{}.max_response_bytes == 32 << 20);  // the default cap: 100k endpoints fit
}

TEST_CASE("Kubernetes API abuse: a redirect is not followed to another host, the call fails naming where it pointed",
          "[manager][kubernetes][abuse]") {
  Rig rig;
  rig.http.route("GET", kServer + kScale, [](const HttpRequest&) {
    auto r = FakeHttpTransport::reply(307);
    r.headers.emplace_back("location", "https://attacker.example/steal");
    return r;
  });
  KubernetesApi api(rig.http, rig.options());
  CHECK_THROWS_WITH(api.get_replicas("lull", "models"),
                    "Kubernetes API GET " + kScale +
                        ": HTTP 307 redirect to https://attacker.example/steal: not followed (lull talks only to the "
                        "API server it was given)");
  CHECK(rig.http.requests().size() == 1);  // not retried, not followed
  CHECK(rig.waits_ms.empty());
}

TEST_CASE("Kubernetes API abuse: stop interrupts a backoff wait at once", "[manager][kubernetes][abuse]") {
  Rig rig;
  rig.http.route("GET", kServer + kScale, [](const HttpRequest&) { return FakeHttpTransport::reply(503); });
  auto o = rig.options();
  o.sleep_ms = nullptr;  // the real wait
  o.backoff_initial_ms = 60'000;
  o.backoff_max_ms = 60'000;
  o.sequence_budget_ms = 0;
  KubernetesApi api(rig.http, o);
  auto call = std::async(std::launch::async, [&] {
    try {
      api.get_replicas("lull", "models");
      return std::string("no error");
    } catch (const KubernetesApiError& e) {
      return std::string(e.what());
    }
  });
  for (int i = 0; i < 500 && rig.http.requests().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  api.interrupt();
  // Ends well before the 60 s wait, with the reason.
  REQUIRE(call.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(call.get() == "Kubernetes API GET " + kScale + ": stopped (lull is shutting down)");
  // Later calls are not sent at all.
  CHECK_THROWS_WITH(api.get_replicas("lull", "models"), Catch::Contains("stopped (lull is shutting down)"));
  CHECK(rig.http.requests().size() == 1);
}

TEST_CASE("Kubernetes API abuse over a socket: a slow-loris answer is bounded by the call's budget",
          "[manager][kubernetes][abuse][process]") {
  // Headers, then one body byte every 200 ms, for ever (until the server goes).
  LoopbackHttpServer server([&](int fd, const std::string&) {
    if (!LoopbackHttpServer::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")) return;
    while (server.pause_ms(200) && LoopbackHttpServer::send_all(fd, " ")) {
    }
  });
  lull::net::HttpClient client;
  Rig rig;
  auto o = rig.options(server.url());
  o.sequence_budget_ms = 1500;
  KubernetesApi api(client, o);
  auto call = std::async(std::launch::async, [&] {
    try {
      api.get_replicas("lull", "models");
      return std::string("no error");
    } catch (const KubernetesApiError& e) {
      return std::string(e.what());
    }
  });
  // A bound on the wait only (never the 5 x 10 s of the attempts' own timeouts): the reason says the budget ended it.
  REQUIRE(call.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  const std::string error = call.get();
  INFO(error);
  CHECK(error.find("Kubernetes API GET " + kScale + ": timed out after ") == 0);
  CHECK(error.find("time budget of 1500 ms is spent") != std::string::npos);
}

TEST_CASE("Kubernetes API abuse over a socket: libcurl refuses a body over the cap, declared or streamed",
          "[manager][kubernetes][abuse][process]") {
  for (const bool declared : {true, false}) {
    INFO((declared ? "Content-Length" : "chunked"));
    LoopbackHttpServer server([&](int fd, const std::string&) {
      const std::string chunk(64 << 10, 'x');
      if (declared) {
        if (!LoopbackHttpServer::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 8388608\r\n\r\n")) return;
        for (int i = 0; i < 128 && LoopbackHttpServer::send_all(fd, chunk); ++i) {
        }
      } else {
        if (!LoopbackHttpServer::send_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
        char size[16];
        std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
        for (int i = 0; i < 128 && LoopbackHttpServer::send_all(fd, size + chunk + "\r\n"); ++i) {
        }
      }
    });
    lull::net::HttpClient client;
    HttpRequest req;
    req.url = server.url() + "/big";
    req.timeout_ms = 10000;
    req.max_response_bytes = 1 << 20;
    const auto r = client.fetch(req);
    CHECK(r.status == 0);
    CHECK(r.error == "response body over the cap of 1048576 bytes");
    CHECK(r.body.size() <= static_cast<std::size_t>(1 << 20));
  }
}

TEST_CASE("Kubernetes API abuse over a socket: libcurl does not follow a redirect to another server",
          "[manager][kubernetes][abuse][process]") {
  LoopbackHttpServer elsewhere([](int fd, const std::string&) {
    LoopbackHttpServer::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 24\r\n\r\n{\"spec\":{\"replicas\":99}}");
  });
  LoopbackHttpServer api_server([&](int fd, const std::string&) {
    LoopbackHttpServer::send_all(
        fd, "HTTP/1.1 302 Found\r\nLocation: " + elsewhere.url() + kScale + "\r\nContent-Length: 0\r\n\r\n");
  });
  lull::net::HttpClient client;
  Rig rig;
  KubernetesApi api(client, rig.options(api_server.url()));
  CHECK_THROWS_WITH(api.get_replicas("lull", "models"), Catch::Contains("HTTP 302 redirect to " + elsewhere.url()));
  CHECK(api_server.connections() == 1);
  CHECK(elsewhere.connections() == 0);
}
