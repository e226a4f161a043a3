#include <catch2/catch.hpp>

#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/model_check.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::serve::testing;

TEST_CASE("model check passes when every worker has every model", "[serve][management]") {
  ModelServerProcess s0({"--fake", "a:0:0", "--fake", "b:0:0"}), s1({"--fake", "a:0:0", "--fake", "b:0:0"});
  HttpClient client;
  CHECK_NOTHROW(check_models_loaded(client, {{s0.url(), s0.url()}, {s1.url(), s1.url()}}, {"a", "b"}));
}

TEST_CASE("model check names the worker, the missing models and what it has", "[serve][management]") {
  ModelServerProcess s0({"--fake", "a:0:0", "--fake", "b:0:0"}), s1({"--fake", "a:0:0"});
  HttpClient client;
  const std::string dead = "http://127.0.0.1:" + std::to_string(free_port());
  try {
    check_models_loaded(client, {{s0.url(), s0.url()}, {s1.url(), s1.url()}, {dead, dead}}, {"a", "b", "c"});
    FAIL("expected ModelCheckError");
  } catch (const ModelCheckError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("worker " + s0.url() + " lacks model c (loaded: a, b)") != std::string::npos);
    CHECK(msg.find("worker " + s1.url() + " lacks models b, c (loaded: a)") != std::string::npos);
    CHECK(msg.find(dead + " unreachable") != std::string::npos);
  }
}

TEST_CASE("model check warns when TorchServe's own batching would hold lull's batches", "[serve][management]") {
  // batchSize 1 (what lull expects) or no delay: no warning.
  ModelServerProcess plain({"--fake", "a:0:0"});
  ModelServerProcess batching({"--fake", "a:0:0", "--report-batch-size", "8", "--report-max-batch-delay", "50"});
  HttpClient client;
  CHECK(check_models_loaded(client, {{plain.url(), plain.url()}}, {"a"}).empty());
  const auto warnings =
      check_models_loaded(client, {{plain.url(), plain.url()}, {batching.url(), batching.url()}}, {"a"});
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("worker " + batching.url() + " model a: batchSize 8, maxBatchDelay 50 ms") == 0);
  CHECK(warnings[0].find("batchSize 1") != std::string::npos);

  // From a management answer as TorchServe writes it.
  const std::string body = R"([{"modelName": "r", "batchSize": 4, "maxBatchDelay": 100, "workers": [{"id": "9000"}]}])";
  CHECK(batching_warning("http://h:8081", "r", body).find("batchSize 4, maxBatchDelay 100 ms") != std::string::npos);
  CHECK(batching_warning("http://h:8081", "r", R"([{"batchSize": 4, "maxBatchDelay": 0}])").empty());
  CHECK(batching_warning("http://h:8081", "r", R"([{"batchSize": 1, "maxBatchDelay": 100}])").empty());
}

TEST_CASE(
    "model check: a model counts as loaded only with a worker READY (TorchServe lists one still loading as "
    "UNLOADING)",
    "[serve][management]") {
  HttpResponse r;
  r.status = 200;
  r.body = R"([{"modelName":"a","workers":[{"id":"9000","status":"READY"}]}])";
  CHECK(model_loaded(r));
  r.body = R"([{"modelName":"a","workers":[{"id":"9000"}]}])";  // no status: counted, as before
  CHECK(model_loaded(r));
  r.body = R"([{"modelName":"a","workers":[{"id":"9000","status":"UNLOADING"}]}])";
  CHECK_FALSE(model_loaded(r));
  r.body = R"([{"modelName":"a","workers":[]}])";
  CHECK_FALSE(model_loaded(r));
  r.status = 404;
  r.body = R"({"code":404,"message":"Model not found: a"})";
  CHECK_FALSE(model_loaded(r));
}

TEST_CASE("stand-in --models-ready-after-ms: /ping passes at once, the models are missing until then",
          "[serve][management]") {
  ModelServerProcess s({"--fake", "a:0:0", "--models-ready-after-ms", "600000"});
  HttpClient client;
  HttpRequest ping;
  ping.url = s.url() + "/ping";
  CHECK(client.fetch(ping).status == 200);
  const HttpResponse model = client.fetch(model_check_request({s.url(), s.url()}, "a", {}));
  CHECK(model.status == 404);
  CHECK_FALSE(model_loaded(model));
  HttpRequest predict;
  predict.method = "POST";
  predict.url = s.url() + "/predictions/a";
  predict.body = "x";
  CHECK(client.fetch(predict).status == 503);
  CHECK_THROWS_AS(check_models_loaded(client, {{s.url(), s.url()}}, {"a"}), ModelCheckError);
}
