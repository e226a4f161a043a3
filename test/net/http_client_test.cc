#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"

using namespace lull::net;
using lull::serve::testing::ModelServerProcess;

TEST_CASE("HTTP client: GET, POST, many in flight, connection refused", "[serve][http]") {
  ModelServerProcess server({"--fake", "fast:5:0"});
  HttpClient client;

  HttpRequest ping;
  ping.url = server.url() + "/ping";
  auto r = client.fetch(ping);
  CHECK(r.status == 200);
  CHECK(r.body.find("Healthy") != std::string::npos);
  CHECK(r.header("content-type") == "application/json");

  // 20 raw single-input requests at once; the server runs them one at a time.
  std::vector<std::future<HttpResponse>> futures;
  for (int i = 0; i < 20; ++i) {
    auto p = std::make_shared<std::promise<HttpResponse>>();
    futures.push_back(p->get_future());
    HttpRequest req;
    req.method = "POST";
    req.url = server.url() + "/predictions/fast";
    req.body = std::string(static_cast<size_t>(i + 1), 'x');
    client.send(req, [p](HttpResponse resp) { p->set_value(std::move(resp)); });
  }
  for (int i = 0; i < 20; ++i) {
    auto resp = futures[i].get();
    INFO(resp.describe());
    REQUIRE(resp.ok());
    CHECK(resp.body.find("\"class\": " + std::to_string(i + 1)) != std::string::npos);
  }

  HttpRequest refused;
  refused.url = "http://127.0.0.1:" + std::to_string(lull::serve::testing::free_port()) + "/ping";
  auto bad = client.fetch(refused);
  CHECK_FALSE(bad.ok());
  CHECK(bad.status == 0);
  CHECK_FALSE(bad.error.empty());
}

TEST_CASE("HTTP client: a request past its timeout fails as timed out, promptly", "[serve][http]") {
  // The answer would come after 60 s: a fetch that returns at all within the
  // test's limit did not wait for it.
  ModelServerProcess server({"--fake", "fast:0:0", "--delay-ms", "60000"});
  HttpClient client;
  HttpRequest req;
  req.method = "POST";
  req.url = server.url() + "/predictions/fast";
  req.body = "x";
  req.timeout_ms = 200;
  auto r = client.fetch(req);
  CHECK(r.timed_out);
  CHECK_FALSE(r.ok());
  // Not before its timeout either, to within curl's timer: it keeps
  // milliseconds and caches its clock per pass, so it can end the transfer
  // a fraction of a millisecond early (199.7 ms seen under ASan).
  CHECK(r.elapsed_us >= 195'000);
  CHECK(r.elapsed_us < 60'000'000);
}

TEST_CASE("HTTP client: cancel completes the request at once", "[serve][http]") {
  // The answer would come after 60 s; the bounded wait below is far shorter.
  ModelServerProcess server({"--fake", "fast:0:0", "--delay-ms", "60000"});
  HttpClient client;
  std::promise<HttpResponse> p;
  HttpRequest req;
  req.method = "POST";
  req.url = server.url() + "/predictions/fast";
  auto id = client.send(req, [&p](HttpResponse r) { p.set_value(std::move(r)); });
  // A ping through the same client's loop, answered: the request went out before it.
  HttpRequest ping;
  ping.url = server.url() + "/ping";
  REQUIRE(client.fetch(ping).ok());
  client.cancel(id);
  auto f = p.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(f.get().cancelled);
}
