#include <catch2/catch.hpp>

#include <httplib.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "runtime/frontend/frontend.h"
#include "runtime/net/http_client.h"
#include "test/support/skip.h"

using namespace lull::frontend;
using namespace lull::net;

namespace {

// Echoes the input's length; counts what reached it.
class EchoService final : public QueryService {
 public:
  Answer serve(std::string input) override {
    ++served;
    Answer a;
    if (input == "overload") {  // what the session's bouncer answers
      a.http_status = 503;
      a.body = "overloaded";
      a.retry_after_s = 3;
      return a;
    }
    a.body = "{\"len\":" + std::to_string(input.size()) + "}";
    a.model = "tiny";
    a.worker = 1;
    return a;
  }
  std::string metrics_text() override { return "lull_queries_total 7\n"; }
  bool healthy() override { return up; }
  std::atomic<int> served{0};
  std::atomic<bool> up{true};
};

HttpResponse post(HttpClient& c, const std::string& url, std::string body, std::string ctype = "") {
  HttpRequest r;
  r.method = "POST";
  r.url = url;
  r.body = std::move(body);
  r.content_type = std::move(ctype);
  r.timeout_ms = 5000;
  return c.fetch(r);
}

}  // namespace

TEST_CASE("front end: model-less predictions, ping, metrics, and refusals", "[serve][frontend]") {
  EchoService service;
  FrontendOptions opts;
  opts.port = 0;
  opts.task = "classify";
  opts.max_body_bytes = 1000;
  Frontend fe(service, opts);
  fe.start();
  const std::string base = "http://127.0.0.1:" + std::to_string(fe.port());
  HttpClient c;

  SECTION("raw bytes and JSON base64 inputs are answered with model and latency headers") {
    auto r = post(c, base + "/predictions/classify", "hello");
    CHECK(r.status == 200);
    CHECK(r.body == "{\"len\":5}");
    CHECK(r.header("x-lull-model") == "tiny");
    CHECK(r.header("x-lull-worker") == "1");
    CHECK_FALSE(r.header("x-lull-latency-ms").empty());
    auto j = post(c, base + "/predictions/classify", R"({"data":"aGVsbG8h"})", "application/json");
    CHECK(j.status == 200);
    CHECK(j.body == "{\"len\":6}");
  }
  SECTION("a JSON body without a \"data\" string reaches the model as it is, as TorchServe hands it over") {
    for (const std::string& body :
         {std::string(R"({"text": "hello world"})"), std::string(R"({"data": 5})"), std::string("[1, 2]")}) {
      auto r = post(c, base + "/predictions/classify", body, "application/json");
      CHECK(r.status == 200);
      CHECK(r.body == "{\"len\":" + std::to_string(body.size()) + "}");
    }
  }
  SECTION("a refusal with Retry-After is a TorchServe error JSON with the header") {
    auto r = post(c, base + "/predictions/classify", "overload");
    CHECK(r.status == 503);
    CHECK(r.header("retry-after") == "3");
    CHECK(r.body == R"({"code":503,"type":"ServiceUnavailableException","message":"overloaded"})");
    CHECK(post(c, base + "/predictions/classify", "hello").header("retry-after").empty());
  }
  SECTION("malformed requests get 400 and never reach the service") {
    CHECK(post(c, base + "/predictions/classify", "").status == 400);
    CHECK(post(c, base + "/predictions/classify", "{nope", "application/json").status == 400);
    CHECK(post(c, base + "/predictions/classify", R"({"data":"@@@"})", "application/json").status == 400);
    CHECK(service.served == 0);
  }
  SECTION("oversized bodies get 413, unknown tasks 404") {
    auto big = post(c, base + "/predictions/classify", std::string(5000, 'x'));
    CHECK(big.status == 413);
    CHECK(post(c, base + "/predictions/other", "x").status == 404);
    CHECK(service.served == 0);
  }
  SECTION("ping and metrics") {
    HttpRequest g;
    g.url = base + "/ping";
    auto healthy = c.fetch(g);
    CHECK(healthy.status == 200);
    CHECK(healthy.body == R"({"status":"Healthy"})");
    service.up = false;
    auto unhealthy = c.fetch(g);
    CHECK(unhealthy.status == 500);
    CHECK(unhealthy.body == R"({"status":"Unhealthy"})");
    service.up = true;
    g.url = base + "/metrics";
    auto m = c.fetch(g);
    CHECK(m.status == 200);
    CHECK(m.body.find("lull_queries_total 7") != std::string::npos);
  }
  fe.stop();
}

namespace {

// Runs a shell command; its stdout (bounded wait: curl's own --max-time).
std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// An EchoService behind a started front end serving "classify" on a free port.
struct EchoFrontend {
  static FrontendOptions options() {
    FrontendOptions o;
    o.port = 0;
    o.task = "classify";
    return o;
  }
  EchoFrontend() { fe.start(); }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(fe.port()); }
  EchoService service;
  Frontend fe{service, options()};
};

}  // namespace

TEST_CASE("front end: the request forms TorchServe accepts (PUT, multipart, versioned path)",
          "[serve][frontend][torchserve]") {
  EchoFrontend echo;
  httplib::Client c("127.0.0.1", echo.fe.port());

  SECTION("PUT with the raw body, on the plain and the versioned path") {
    auto r = c.Put("/predictions/classify", "12345", "application/octet-stream");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == "{\"len\":5}");
    auto v = c.Post("/predictions/classify/1.0", "1234", "application/octet-stream");
    REQUIRE(v);
    CHECK(v->status == 200);
    CHECK(v->body == "{\"len\":4}");
    auto pv = c.Put("/predictions/classify/2", "123", "image/jpeg");
    REQUIRE(pv);
    CHECK(pv->body == "{\"len\":3}");
  }
  SECTION("multipart fields data and body carry the input") {
    httplib::MultipartFormDataItems data = {{"data", "abcdefg", "img.jpg", "image/jpeg"}};
    auto r = c.Post("/predictions/classify", data);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == "{\"len\":7}");
    httplib::MultipartFormDataItems body = {{"body", "abc", "", ""}};
    auto b = c.Post("/predictions/classify/1.0", body);
    REQUIRE(b);
    CHECK(b->body == "{\"len\":3}");
    httplib::MultipartFormDataItems other = {{"file", "abc", "x", ""}};
    auto o = c.Post("/predictions/classify", other);
    REQUIRE(o);
    CHECK(o->status == 400);
    CHECK(o->body.find("lacks a non-empty field") != std::string::npos);
  }
  SECTION("errors carry TorchServe's code, type and message") {
    auto r = c.Put("/predictions/other/1.0", "x", "application/octet-stream");
    REQUIRE(r);
    CHECK(r->status == 404);
    CHECK(r->body.rfind(R"({"code":404,"type":"ModelNotFoundException","message":"unknown task 'other')", 0) == 0);
    auto e = c.Put("/predictions/classify", "", "application/octet-stream");
    REQUIRE(e);
    CHECK(e->status == 400);
    CHECK(e->body.find(R"("type":"BadRequestException")") != std::string::npos);
    CHECK(echo.service.served == 0);
  }
}

TEST_CASE("front end: curl -T, curl -F data=@ and a versioned path work", "[serve][frontend][torchserve][curl]") {
  if (access("/usr/bin/curl", X_OK) != 0) {
    LULL_SKIP("/usr/bin/curl is not installed");
  }
  EchoFrontend echo;
  const std::string base = echo.base();
  char path[] = "/tmp/lull-frontend-test-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, "0123456789", 10) == 10);
  close(fd);
  const std::string file = path;
  const std::string curl = "/usr/bin/curl -s --max-time 10 -w ' %{http_code}' ";
  CHECK(shell(curl + "-T " + file + " " + base + "/predictions/classify") == "{\"len\":10} 200");
  CHECK(shell(curl + "-F data=@" + file + " " + base + "/predictions/classify") == "{\"len\":10} 200");
  CHECK(shell(curl + "-T " + file + " " + base + "/predictions/classify/1.0") == "{\"len\":10} 200");
  CHECK(shell(curl + "--data-binary @" + file + " " + base + "/predictions/classify/1.0") == "{\"len\":10} 200");
  CHECK(echo.service.served == 4);
  std::remove(path);
}

TEST_CASE("listen addresses are HOST:PORT", "[serve][frontend]") {
  std::string host;
  int port = 0;
  parse_listen_address("127.0.0.1:8070", &host, &port);
  CHECK(host == "127.0.0.1");
  CHECK(port == 8070);
  CHECK_THROWS_WITH(parse_listen_address("8070", &host, &port), Catch::Contains("8070"));
  CHECK_THROWS(parse_listen_address("h:70x", &host, &port));
}

TEST_CASE("front end: the default port is none of TorchServe's or Triton's defaults", "[serve][frontend]") {
  // TorchServe: inference 8080, management 8081, metrics 8082, gRPC 7070/7071;
  // Triton: HTTP 8000, gRPC 8001, metrics 8002. On one host they would collide.
  const int port = FrontendOptions().port;
  CHECK(port == FrontendOptions::kDefaultPort);
  for (int taken : {8080, 8081, 8082, 7070, 7071, 8000, 8001, 8002}) CHECK(port != taken);
}
