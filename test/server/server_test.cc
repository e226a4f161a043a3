// The Server (runtime/server/server.h): `lull serve` as one object, in
// process: every HTTP client it makes towards the model servers is the fake
// transport (ServeSpec::transport; test/support/fake_http_transport.h)
// standing in for two TorchServe servers, and queries reach its front end on
// a loopback port (so the process tier). What its start() and stop() order must show from
// outside: nothing takes queries before start() or after an interrupted
// start; after stop() the front end is closed; stop() is idempotent and the
// destructor after a failed start() is safe; the model check refuses
// servers without the policies' models. (A query waiting at stop() is
// answered: serve_shutdown_test.cc, through the lull binary.)
#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "runtime/net/http_client.h"
#include "runtime/net/json_value.h"
#include "runtime/server/server.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "test/support/fake_http_transport.h"
#include "test/support/session_test_support.h"

using namespace lull;
using lull::test::FakeHttpTransport;

namespace {

// Model servers on the fake, at `urls`, each holding `models`: /ping passes,
// the management API lists each model with a worker, and a batch is
// answered with one prediction per input. No route: connection refused.
std::function<std::unique_ptr<net::HttpTransport>()> fake_servers(std::vector<std::string> urls,
                                                                  std::vector<std::string> models) {
  return [urls, models]() -> std::unique_ptr<net::HttpTransport> {
    auto http = std::make_unique<FakeHttpTransport>();
    for (const auto& url : urls) {
      http->route("GET", url + "/ping",
                  [](const net::HttpRequest&) { return FakeHttpTransport::reply(200, "{\"status\":\"Healthy\"}"); });
      for (const auto& m : models) {
        http->route("GET", url + "/models/" + m, [m](const net::HttpRequest&) {
          return FakeHttpTransport::reply(200, "[{\"modelName\":\"" + m + "\",\"workers\":[{\"id\":\"9000\"}]}]");
        });
        http->route("POST", url + "/predictions/" + m, [m](const net::HttpRequest& r) {
          net::JsonValue body;
          const net::JsonValue* inputs = net::parse_json(r.body, &body) ? net::json_field(body, "inputs") : nullptr;
          if (!inputs || inputs->kind_case() != net::JsonValue::kListValue)
            return FakeHttpTransport::reply(400, "bad batch");
          std::string predictions;
          for (int i = 0; i < inputs->list_value().values_size(); ++i)
            predictions += std::string(i ? "," : "") + "{\"model\":\"" + m + "\"}";
          return FakeHttpTransport::reply(200, "{\"predictions\":[" + predictions + "]}");
        });
      }
    }
    return http;
  };
}

server::ServeSpec spec_over(const std::vector<std::string>& urls, std::vector<std::string> models = {"small", "big"}) {
  server::ServeSpec spec;
  spec.table = serve::testing::tiny_session_table(static_cast<int>(urls.size()));
  for (const auto& u : urls) spec.servers.push_back({u, u});
  spec.frontend.host = "127.0.0.1";
  spec.frontend.port = 0;
  spec.backend.health_interval_ms = 100;
  spec.backend.health_timeout_ms = 300;
  spec.model_check = false;
  spec.transport = fake_servers(urls, std::move(models));
  return spec;
}

const std::vector<std::string> kTwo = {"http://10.0.0.1:8080", "http://10.0.0.2:8080"};

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
  auto spec = spec_over(kTwo);
  spec.model_check = true;  // the fakes hold both models
  server::Server server(std::move(spec));
  CHECK(server.port() == 0);  // no front end before start()
  CHECK(server.start() == 2);
  REQUIRE(server.port() > 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/predictions/classify";
  net::HttpClient client;
  const net::HttpResponse answered = post(client, url);
  CHECK(answered.status == 200);
  CHECK(answered.body.find("\"model\"") != std::string::npos);  // the fake server's prediction
  server.stop();
  const net::HttpResponse after = post(client, url, 2000);
  CHECK(after.status == 0);  // nothing listens any more
  server.stop();             // again: nothing left to do
}

TEST_CASE("Server: a start() that fails leaves a server that stops and goes cleanly") {
  auto spec = spec_over({"http://10.0.0.9:8080"});
  spec.transport = fake_servers({}, {});  // nothing answers there
  server::Server server(std::move(spec));
  CHECK_THROWS_WITH(server.start(), "no worker answers GET /ping");
  CHECK(server.port() == 0);
  server.stop();
}

TEST_CASE("Server: after interrupt() (a stop signal during start-up) start() brings up no front end") {
  server::Server server(spec_over({kTwo.front()}));
  server.interrupt();
  CHECK(server.interrupted());
  CHECK(server.start() == 1);
  CHECK(server.port() == 0);
}

TEST_CASE("Server: the model check at construction refuses servers without the policies' models") {
  auto spec = spec_over({kTwo.front()}, {"small"});  // no "big"
  spec.model_check = true;
  CHECK_THROWS_AS([&] { server::Server refused(std::move(spec)); }(), torchserve::ModelCheckError);
}
