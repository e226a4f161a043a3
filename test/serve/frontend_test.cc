#include <catch2/catch.hpp>

#include <atomic>

#include "runtime/serve/frontend.h"
#include "runtime/serve/http_client.h"

using namespace lull::serve;

namespace {

// Echoes the input's length; counts what reached it.
class EchoService final : public QueryService {
 public:
  Answer serve(std::string input) override {
    ++served;
    Answer a;
    a.body = "{\"len\":" + std::to_string(input.size()) + "}";
    a.model = "tiny";
    a.worker = 1;
    return a;
  }
  std::string metrics_text() override { return "lull_queries_total 7\n"; }
  std::atomic<int> served{0};
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
  SECTION("malformed requests get 400 and never reach the service") {
    CHECK(post(c, base + "/predictions/classify", "").status == 400);
    CHECK(post(c, base + "/predictions/classify", "{nope", "application/json").status == 400);
    CHECK(post(c, base + "/predictions/classify", R"({"x":1})", "application/json").status == 400);
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
    CHECK(c.fetch(g).status == 200);
    g.url = base + "/metrics";
    auto m = c.fetch(g);
    CHECK(m.status == 200);
    CHECK(m.body.find("lull_queries_total 7") != std::string::npos);
  }
  fe.stop();
}

TEST_CASE("listen addresses are HOST:PORT", "[serve][frontend]") {
  std::string host;
  int port = 0;
  parse_listen_address("127.0.0.1:7070", &host, &port);
  CHECK(host == "127.0.0.1");
  CHECK(port == 7070);
  CHECK_THROWS_WITH(parse_listen_address("7070", &host, &port), Catch::Contains("7070"));
  CHECK_THROWS(parse_listen_address("h:70x", &host, &port));
}
