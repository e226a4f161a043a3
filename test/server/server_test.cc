// The Server (runtime/server/server.h): `lull serve` as one object over two
// stand-in model servers. What its start() and stop() order must show from
// outside: nothing takes queries before start() or after an interrupted
// start; after stop() the front end is closed; stop() is idempotent and the
// destructor after a failed start() is safe. (A query waiting at stop() is
// answered: serve_shutdown_test.cc, through the lull binary.)
#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <string>

#include "test/support/model_server_process.h"
#include "test/server/serve_stack_support.h"
#include "test/support/session_test_support.h"
#include "runtime/net/http_client.h"
#include "runtime/server/server.h"
#include "runtime/upstream/torchserve/model_check.h"

using namespace lull;
using serve::testing::ModelServerProcess;

namespace {
server::ServeSpec spec_over(const std::vector<std::string>& urls) {
  server::ServeSpec spec;
  spec.table = serve::testing::tiny_session_table(static_cast<int>(urls.size()));
  for (const auto& u : urls) spec.servers.push_back({u, u});
  spec.frontend.host = "127.0.0.1";
  spec.frontend.port = 0;
  spec.backend = serve::testing::fast_health_checks();
  spec.model_check = false;
  return spec;
}

net::HttpResponse post(net::HttpClient& client, const std::string& url, std::int64_t timeout_ms = 20000) {
  auto p = std::make_shared<std::promise<net::HttpResponse>>();
  auto answer = p->get_future();
  net::HttpRequest r;
  r.method = "POST";
  r.url = url;
  r.body = "q";
  r.timeout_ms = timeout_ms;
  client.send(r, [p](net::HttpResponse resp) { p->set_value(std::move(resp)); });
  return answer.get();
}
}  // namespace

TEST_CASE("Server: start() brings up the workers and then the front end, stop() closes it and is idempotent") {
  ModelServerProcess s0({"--fake", "small:5:1", "--fake", "big:20:2"}),
      s1({"--fake", "small:5:1", "--fake", "big:20:2"});
  auto spec = spec_over({s0.url(), s1.url()});
  spec.model_check = true;  // the stand-ins hold both models
  server::Server server(std::move(spec));
  CHECK(server.port() == 0);  // no front end before start()
  CHECK(server.start() == 2);
  REQUIRE(server.port() > 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/predictions/classify";
  net::HttpClient client;
  CHECK(post(client, url).status == 200);
  server.stop();
  const net::HttpResponse after = post(client, url, 2000);
  CHECK(after.status == 0);  // nothing listens any more
  server.stop();             // again: nothing left to do
}

TEST_CASE("Server: a start() that fails leaves a server that stops and goes cleanly") {
  std::string dead_url;
  {
    ModelServerProcess gone({"--fake", "small:5:1", "--fake", "big:20:2"});
    dead_url = gone.url();
  }  // stopped: nothing answers there now
  server::Server server(spec_over({dead_url}));
  CHECK_THROWS_WITH(server.start(), "no worker answers GET /ping");
  CHECK(server.port() == 0);
  server.stop();
}

TEST_CASE("Server: after interrupt() (a stop signal during start-up) start() brings up no front end") {
  ModelServerProcess s0({"--fake", "small:5:1", "--fake", "big:20:2"});
  server::Server server(spec_over({s0.url()}));
  server.interrupt();
  CHECK(server.interrupted());
  CHECK(server.start() == 1);
  CHECK(server.port() == 0);
}

TEST_CASE("Server: the model check at construction refuses servers without the policies' models") {
  ModelServerProcess s0({"--fake", "small:5:1"});  // no "big"
  auto spec = spec_over({s0.url()});
  spec.model_check = true;
  CHECK_THROWS_AS([&] { server::Server refused(std::move(spec)); }(), torchserve::ModelCheckError);
}
