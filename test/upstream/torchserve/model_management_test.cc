// The TorchServe management client (runtime/upstream/torchserve/model_management.h)
// against the stand-in server's management API: load, list, unload, and the
// failures TorchServe answers (a model that fails to load, one not in the
// store, one already registered, one not registered), each reported with
// TorchServe's own reason.
#include <catch2/catch.hpp>

#include <algorithm>

#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "runtime/upstream/torchserve/model_management.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::serve::testing;

namespace {
bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
}  // namespace

TEST_CASE("management client loads, lists and unloads a model", "[serve][management]") {
  ModelServerProcess s({"--fake", "a:0:0", "--store-fake", "b:1:0"});
  HttpClient client;
  ModelManagementClient m(client, s.url());
  CHECK(m.list() == std::vector<std::string>{"a"});
  CHECK(m.load("b", "b.mar") == "Model \"b\" Version: 1.0 registered with 1 initial workers");
  CHECK(m.list() == std::vector<std::string>{"a", "b"});
  // Loaded means ready: the start-up model check now passes for b.
  CHECK_NOTHROW(check_models_loaded(client, {{s.url(), s.url()}}, {"a", "b"}));
  // And it serves predictions.
  HttpRequest req;
  req.method = "POST";
  req.url = s.url() + "/predictions/b";
  req.body = "x";
  CHECK(client.fetch(req).status == 200);

  CHECK(m.unload("b") == "Model \"b\" unregistered");
  CHECK(m.list() == std::vector<std::string>{"a"});
  CHECK(client.fetch(req).status == 404);  // an unloaded model answers nothing
  // Under another name, from a URL.
  CHECK(m.load("b2", "https://example.invalid/store/b.mar").find("\"b2\"") != std::string::npos);
  CHECK(has(m.list(), "b2"));
  HttpRequest describe;
  describe.url = s.url() + "/models/b2";
  CHECK(client.fetch(describe).body.find("\"modelUrl\": \"https://example.invalid/store/b.mar\"") != std::string::npos);
}

TEST_CASE("management client reports a model that fails to load, as TorchServe answers it",
          "[serve][management][fault]") {
  ModelServerProcess s(
      {"--fake", "a:0:0", "--store-fake", "broken:1:0", "--fail-load", "broken", "--load-delay-ms", "50"});
  HttpClient client;
  ModelManagementClient m(client, s.url());
  try {
    m.load("broken", "broken.mar");
    FAIL("expected ModelManagementError");
  } catch (const ModelManagementError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(e.status == 500);
    CHECK(msg.find("management API " + s.url() +
                   ": loading model broken (url broken.mar) failed: HTTP 500 "
                   "InternalServerException: Failed to start workers for model broken version: 1.0") == 0);
  }
  // TorchServe leaves a model that failed to load unregistered.
  CHECK(m.list() == std::vector<std::string>{"a"});
}

TEST_CASE("management client names TorchServe's 404 and 409 answers", "[serve][management][fault]") {
  ModelServerProcess s({"--fake", "a:0:0"});
  HttpClient client;
  ModelManagementClient m(client, s.url());
  const auto reason = [&](auto call) {
    try {
      call();
    } catch (const ModelManagementError& e) {
      return std::to_string(e.status) + " " + e.what();
    }
    return std::string("no error");
  };
  CHECK(reason([&] { m.load("nope", "nope.mar"); })
            .find("404 management API " + s.url() +
                  ": loading model nope (url nope.mar) failed: HTTP 404 ModelNotFoundException: Model not found in "
                  "model store: nope.mar") == 0);
  CHECK(reason([&] {
          m.load("a", "a.mar");
        }).find("HTTP 409 ConflictStatusException: Model version 1.0 is already registered for model a") !=
        std::string::npos);
  CHECK(reason([&] {
          m.unload("zzz");
        }).find("unloading model zzz failed: HTTP 404 ModelNotFoundException: Model not found: zzz") !=
        std::string::npos);
  // Nobody listening: the transport error.
  ModelManagementClient dead(client, "http://127.0.0.1:" + std::to_string(free_port()));
  CHECK(reason([&] { dead.list(); }).find("0 management API") == 0);
}

TEST_CASE("management client sends the management key, a refused key is named as such", "[serve][management]") {
  const std::string keys = "/tmp/lull-mgmt-keys-" + std::to_string(free_port()) + ".json";
  {
    std::FILE* f = std::fopen(keys.c_str(), "w");
    std::fputs(R"({"management": {"key": "M1"}, "inference": {"key": "I1"}, "API": {"key": "A"}})", f);
    std::fclose(f);
  }
  ModelServerProcess s({"--fake", "a:0:0", "--store-fake", "b:0:0", "--token-file", keys});
  HttpClient client;
  ModelManagementOptions good;
  good.management_key = "M1";
  CHECK(ModelManagementClient(client, s.url(), good).load("b", "b.mar").find("registered") != std::string::npos);
  try {
    ModelManagementClient(client, s.url()).unload("b");
    FAIL("expected a refusal");
  } catch (const ModelManagementError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("management") != std::string::npos);
    CHECK(std::string(e.what()).find("token") != std::string::npos);
  }
  std::remove(keys.c_str());
}

TEST_CASE("url_encode keeps unreserved characters only", "[serve][management]") {
  CHECK(url_encode("a-b_c.d~E9") == "a-b_c.d~E9");
  CHECK(url_encode("https://x/y.mar?a=1&b") == "https%3A%2F%2Fx%2Fy.mar%3Fa%3D1%26b");
}
