// The TorchServe backend's rules in process, over the fake transport
// (test/support/fake_http_transport.h) standing in for the model servers:
// one request per batch with the answers split back in order, a missing
// model fails the batch and not the worker, a server that cannot be reached
// goes down and rejoins at its next passing ping, a timed-out batch ejects,
// an unreachable worker starts out of rotation. No process, no socket: a
// "slow" server answers as the transport does when the timeout passes.
// torchserve_backend_test.cc keeps the one case that needs a real server
// killed mid-batch.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <thread>

#include "test/support/backend_test_support.h"
#include "runtime/net/base64.h"
#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "runtime/upstream/v2/v2_wire.h"
#include "test/support/fake_http_transport.h"

using namespace lull::net;
using namespace lull::torchserve;
using lull::core::BatchRequest;
using lull::serve::testing::batch;
using lull::serve::testing::ResultLog;
using lull::test::FakeHttpTransport;
using std::chrono::milliseconds;

namespace {

// TorchServe 0.12's answer to a batch when the model has no worker (scaled
// to zero), and word for word when its job queue is full (recorded).
const std::string kNoWorker = R"({
  "code": 503,
  "type": "ServiceUnavailableException",
  "message": "Model \"fast\" has no worker to serve inference request. Please use scale workers API to add workers. If this is a sequence inference, please check if it is closed, or expired; or exceeds maxSequenceJobQueueSize"
})";

// A model server "fast" at `url` on the fake: /ping answers 200 while `up`,
// a batch of model `model` answers one {"class": len(input) % 1000} per input
// (as the stand-in model server's --fake does), another model 404, and
// nothing at all (connection refused) while down. `slow`: every batch takes
// longer than its timeout, so the transport times it out. `no_worker`: every
// batch gets TorchServe's 503 kNoWorker.
struct FakeModelServer {
  std::string url;
  std::shared_ptr<std::atomic<bool>> up = std::make_shared<std::atomic<bool>>(true);
  std::shared_ptr<std::atomic<bool>> slow = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<bool>> no_worker = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<int>> batches = std::make_shared<std::atomic<int>>(0);

  FakeModelServer(FakeHttpTransport& http, std::string base, const std::string& model) : url(std::move(base)) {
    auto refused = [] {
      HttpResponse r;
      r.error = "Couldn't connect to server";
      return r;
    };
    http.route("GET", url + "/ping", [up = up, refused](const HttpRequest&) {
      return *up ? FakeHttpTransport::reply(200, "{\"status\":\"Healthy\"}") : refused();
    });
    const auto no_worker_flag = no_worker;  // [=] copies it (a member would capture `this`)
    for (const std::string& m : {model, std::string("absent")})
      http.route("POST", url + "/predictions/" + m, [=, up = up, slow = slow, batches = batches](const HttpRequest& r) {
        if (!*up) return refused();
        ++*batches;
        if (*no_worker_flag) return FakeHttpTransport::reply(503, kNoWorker);
        if (*slow) {
          HttpResponse late;
          late.error = "Timeout was reached";
          late.timed_out = true;
          late.elapsed_us = r.timeout_ms * 1000;
          return late;
        }
        if (m != model) return FakeHttpTransport::reply(404, "{\"code\":404,\"message\":\"Model not found\"}");
        JsonValue body;
        const JsonValue* inputs = parse_json(r.body, &body) ? json_field(body, "inputs") : nullptr;
        if (!inputs || inputs->kind_case() != JsonValue::kListValue) return FakeHttpTransport::reply(400, "bad batch");
        std::string predictions;
        for (const auto& in : inputs->list_value().values()) {
          const auto bytes = base64_decode(in.string_value());
          if (!predictions.empty()) predictions += ",";
          predictions += "{\"class\":" + std::to_string(bytes ? bytes->size() % 1000 : 0) + ",\"score\":1.0}";
        }
        return FakeHttpTransport::reply(200, "{\"predictions\":[" + predictions + "]}");
      });
  }
};

// The backend over a fake it owns; `http` stays usable for routes until the backend stops.
struct Rig {
  std::unique_ptr<FakeHttpTransport> owned = std::make_unique<FakeHttpTransport>();
  FakeHttpTransport& http = *owned;
};

template <class F>
bool eventually(F cond, milliseconds limit) {
  for (auto t = milliseconds(0); t < limit; t += milliseconds(5)) {
    if (cond()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return cond();
}

}  // namespace

TEST_CASE("TorchServe backend (fake transport): one request per batch, answers split back in order",
          "[serve][backend]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast"), s1(rig.http, "http://10.0.0.2:8080", "fast");
  lull::serve::testing::QueryInputsForTest inputs;
  for (int id = 1; id <= 12; ++id) inputs.put(id, std::string(static_cast<size_t>(id * 3), 'q'));
  TorchServeBackend backend({{s0.url, s0.url}, {s1.url, s1.url}}, {"fast"}, {}, std::move(rig.owned));
  ResultLog log;
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 2);

  backend.start_batch(inputs.batch(0, 0, {1, 2, 3, 4, 5}));
  backend.start_batch(inputs.batch(1, 0, {6, 7, 8, 9, 10, 11, 12}));
  auto results = log.wait_for(2, milliseconds(5000));
  REQUIRE(results.size() == 2);
  for (const auto& r : results) {
    CHECK(r.ok);
    REQUIRE(r.outputs.size() == r.queries.size());
    for (size_t i = 0; i < r.queries.size(); ++i)
      CHECK(r.outputs[i] == "{\"class\":" + std::to_string(r.queries[i] * 3) + ",\"score\":1.0}");
  }
  CHECK(*s0.batches == 1);  // one request each
  CHECK(*s1.batches == 1);
  for (const auto& r : rig.http.requests())
    if (r.method == "POST") CHECK(r.content_type == "application/json");
}

TEST_CASE("TorchServe backend (fake transport): a model the server lacks fails the batch, not the worker",
          "[serve][backend]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast");
  lull::serve::testing::QueryInputsForTest inputs;
  inputs.put(1, "x");
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast", "absent"}, {}, std::move(rig.owned));
  ResultLog log;
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 1);
  backend.start_batch(inputs.batch(0, 1, {1}));
  auto results = log.wait_for(1, milliseconds(3000));
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK(results[0].outputs.empty());
  CHECK(results[0].error.find("HTTP 404") != std::string::npos);
  CHECK(backend.worker_up(0));
  CHECK(backend.stats(0).last_error.find("HTTP 404") != std::string::npos);
}

TEST_CASE(
    "TorchServe backend (fake transport): a server that cannot be reached goes down, fails what is sent to it, "
    "rejoins at its next passing ping",
    "[serve][backend][fault]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast");
  lull::serve::testing::QueryInputsForTest inputs;
  for (int id = 1; id <= 4; ++id) inputs.put(id, "x");
  TorchServeOptions opts;
  opts.health_interval_ms = 20;
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, opts, std::move(rig.owned));
  ResultLog log;
  std::atomic<int> downs{0}, ups{0};
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  backend.set_health_handler([&](int, bool up) { (up ? ups : downs)++; });
  REQUIRE(backend.start() == 1);
  ups = 0;  // the start's own ping

  *s0.up = false;  // gone: its connections are refused
  backend.start_batch(inputs.batch(0, 0, {1, 2}));
  auto results = log.wait_for(1, milliseconds(3000));
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK(results[0].error.find("Couldn't connect") != std::string::npos);
  CHECK(eventually([&] { return !backend.worker_up(0); }, milliseconds(3000)));
  CHECK(downs == 1);

  backend.start_batch(inputs.batch(0, 0, {3}));  // while down: fails at once, asynchronously
  auto second = log.wait_for(2, milliseconds(3000));
  REQUIRE(second.size() == 2);
  CHECK(second[1].error.find("is down") != std::string::npos);

  *s0.up = true;
  CHECK(eventually([&] { return backend.worker_up(0); }, milliseconds(5000)));
  CHECK(ups == 1);
  backend.start_batch(inputs.batch(0, 0, {1, 2}));
  auto after = log.wait_for(3, milliseconds(3000));
  REQUIRE(after.size() == 3);
  CHECK(after[2].ok);
}

TEST_CASE(
    "TorchServe backend (fake transport): with the rejoin model check, a server back whose ping passes before its "
    "model is loaded stays out until GET /models/{name} shows it loaded, then rejoins",
    "[serve][backend][fault]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast");
  auto loaded = std::make_shared<std::atomic<bool>>(true);
  auto checks = std::make_shared<std::atomic<int>>(0);
  rig.http.route("GET", s0.url + "/models/fast", [loaded, checks](const HttpRequest&) {
    ++*checks;
    return *loaded ? FakeHttpTransport::reply(200, R"([{"modelName":"fast","workers":[{"status":"READY"}]}])")
                   : FakeHttpTransport::reply(404, R"({"code":404,"message":"Model not found: fast"})");
  });
  lull::serve::testing::QueryInputsForTest inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.health_interval_ms = 3600 * 1000;  // pings only when the test calls check_health()
  opts.rejoin_model_check = ModelCheckOptions{};
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, opts, std::move(rig.owned));
  ResultLog log;
  std::atomic<int> downs{0}, ups{0};
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  backend.set_health_handler([&](int, bool up) { (up ? ups : downs)++; });
  REQUIRE(backend.start() == 1);
  CHECK(*checks == 0);  // a worker never down rejoins at its ping: the start-up check is the server's
  ups = 0;

  *s0.up = false;
  backend.check_health();
  REQUIRE(rig.http.wait_idle());
  CHECK_FALSE(backend.worker_up(0));
  CHECK(downs == 1);

  // Restarted: /ping passes, the model is not loaded yet.
  *s0.up = true;
  *loaded = false;
  for (int i = 0; i < 3; ++i) {
    backend.check_health();
    REQUIRE(rig.http.wait_idle());
    CHECK_FALSE(backend.worker_up(0));
  }
  CHECK(*checks == 3);
  CHECK(ups == 0);
  CHECK(*s0.batches == 0);

  // Loaded: the next passing ping and its model check bring it back.
  *loaded = true;
  backend.check_health();
  REQUIRE(rig.http.wait_idle());
  CHECK(backend.worker_up(0));
  CHECK(ups == 1);
  backend.start_batch(inputs.batch(0, 0, {1}));
  auto results = log.wait_for(1, milliseconds(3000));
  REQUIRE(results.size() == 1);
  CHECK(results[0].ok);
}

TEST_CASE(
    "TorchServe backend (fake transport): with the rejoin model check, a server whose model is loaded when it is "
    "back rejoins at the same ping",
    "[serve][backend][fault]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast");
  rig.http.route("GET", s0.url + "/models/fast", [](const HttpRequest&) {
    return FakeHttpTransport::reply(200, R"([{"modelName":"fast","workers":[{"status":"READY"}]}])");
  });
  TorchServeOptions opts;
  opts.health_interval_ms = 3600 * 1000;
  opts.rejoin_model_check = ModelCheckOptions{};
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, opts, std::move(rig.owned));
  std::atomic<int> ups{0};
  backend.set_health_handler([&](int, bool up) { ups += up; });
  REQUIRE(backend.start() == 1);
  ups = 0;
  *s0.up = false;
  backend.check_health();
  REQUIRE(rig.http.wait_idle());
  REQUIRE_FALSE(backend.worker_up(0));
  *s0.up = true;
  backend.check_health();
  REQUIRE(rig.http.wait_idle());
  CHECK(backend.worker_up(0));
  CHECK(ups == 1);
}

TEST_CASE("TorchServe backend (fake transport): a batch past its timeout fails and ejects, not waited on",
          "[serve][backend][fault]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast");
  *s0.slow = true;
  lull::serve::testing::QueryInputsForTest inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.batch_timeout_ms = 300;
  opts.health_interval_ms = 10000;
  opts.outlier.eject_after_failures = 1;
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, opts, std::move(rig.owned));
  ResultLog log;
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 1);  // the ping does not go through the model
  backend.start_batch(inputs.batch(0, 0, {1}));
  auto results = log.wait_for(1, milliseconds(3000));
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK_FALSE(backend.worker_up(0));
  CHECK(backend.stats(0).last_error.find("timed out after 300 ms") != std::string::npos);
  CHECK(backend.stats(0).ejections == 1);
  const auto sent = rig.http.requests();
  REQUIRE(sent.size() == 2);
  CHECK(sent[1].timeout_ms == 300);  // the batch's own timeout, as asked
}

TEST_CASE("TorchServe wire: not ready on TorchServe's own 503 'no worker', not on another 503",
          "[serve][backend][not_ready]") {
  const BatchWire& wire = torchserve_wire();
  auto answer = [](int status, const std::string& body) {
    HttpResponse r;
    r.status = status;
    r.body = body;
    return r;
  };
  CHECK(wire.not_ready(answer(503, kNoWorker)));
  // With the version in the URL, TorchServe names it in the message.
  CHECK(wire.not_ready(answer(
      503, R"({"code": 503, "type": "ServiceUnavailableException", "message": "Model \"fast\" Version 1.0\" has )"
           R"(no worker to serve inference request. Please use scale workers API to add workers."})")));
  // A proxy's 503, TorchServe's 503 for something else, the message under another status or type.
  CHECK_FALSE(
      wire.not_ready(answer(503, "<html><head><title>503 Service Temporarily Unavailable</title></head></html>")));
  CHECK_FALSE(wire.not_ready(answer(503, "no healthy upstream")));
  CHECK_FALSE(wire.not_ready(answer(503, "")));
  CHECK_FALSE(wire.not_ready(answer(
      503, R"({"code": 503, "type": "ServiceUnavailableException", "message": "Invalid HTTP method received"})")));
  CHECK_FALSE(wire.not_ready(answer(500, kNoWorker)));
  CHECK_FALSE(wire.not_ready(answer(
      503,
      R"({"code": 503, "type": "InternalServerException", "message": "has no worker to serve inference request"})")));
  HttpResponse lost = answer(503, kNoWorker);
  lost.error = "Connection reset by peer";
  CHECK_FALSE(wire.not_ready(lost));
}

TEST_CASE(
    "TorchServe backend (fake transport): a 503 'no worker' fails the batch whole for another worker, with "
    "TorchServe's message, and counts as the worker's failure",
    "[serve][backend][not_ready]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast"), s1(rig.http, "http://10.0.0.2:8080", "fast");
  *s0.no_worker = true;  // its model scaled to zero workers (or its job queue full)
  lull::serve::testing::QueryInputsForTest inputs;
  for (int id = 1; id <= 4; ++id) inputs.put(id, std::string(static_cast<size_t>(id), 'q'));
  TorchServeOptions opts;
  opts.health_interval_ms = 10000;
  opts.outlier.eject_after_failures = 2;
  TorchServeBackend backend({{s0.url, s0.url}, {s1.url, s1.url}}, {"fast"}, opts, std::move(rig.owned));
  ResultLog log;
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 2);  // its /ping passes: TorchServe answers Healthy with no worker
  backend.start_batch(inputs.batch(0, 0, {1, 2, 3, 4}));
  auto results = log.wait_for(1, milliseconds(5000));
  REQUIRE(results.size() == 1);
  INFO(results[0].error);
  // Failed whole (the Dispatcher retries it on another worker), not answered 503 per query, not split.
  CHECK_FALSE(results[0].ok);
  CHECK(results[0].outputs.empty());
  CHECK(results[0].input_status.empty());
  CHECK(results[0].error.find("HTTP 503: Model \"fast\" has no worker to serve inference request") !=
        std::string::npos);
  CHECK(*s0.batches == 1);
  CHECK(backend.worker_up(0));
  // The retry's worker answers every query.
  backend.start_batch(inputs.batch(1, 0, {1, 2, 3, 4}));
  results = log.wait_for(2, milliseconds(5000));
  REQUIRE(results.size() == 2);
  CHECK(results[1].ok);
  CHECK(results[1].outputs.size() == 4);
  // A worker fault like any 5xx: the same answer means a full job queue, which ejection relieves.
  backend.start_batch(inputs.batch(0, 0, {1}));
  results = log.wait_for(3, milliseconds(5000));
  REQUIRE(results.size() == 3);
  CHECK_FALSE(results[2].ok);
  CHECK_FALSE(backend.worker_up(0));
  CHECK(backend.stats(0).ejections == 1);
  CHECK(backend.worker_up(1));
}

namespace {

// A TorchServe on the fake whose /ping and predictions need "Bearer <key>",
// refused as TorchServe refuses (400 InvalidKeyException); `key` is what the
// server checks, rotated by the test before or after it rewrites the key file.
struct KeyedModelServer {
  std::string url;
  std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
  std::shared_ptr<std::string> key = std::make_shared<std::string>("k1");
  std::shared_ptr<std::atomic<int>> refused = std::make_shared<std::atomic<int>>(0);

  KeyedModelServer(FakeHttpTransport& http, std::string base) : url(std::move(base)) {
    auto keyed = [mu = mu, key = key, refused = refused](const HttpRequest& r, HttpResponse ok) {
      std::lock_guard<std::mutex> lock(*mu);
      if (r.bearer_token == *key) return ok;
      ++*refused;
      return FakeHttpTransport::reply(
          400, R"({"code": 400, "type": "InvalidKeyException", "message": "Token )"
               R"(Authorization failed. Token either incorrect, expired, or not provided correctly"})");
    };
    http.route("GET", url + "/ping", [keyed](const HttpRequest& r) {
      return keyed(r, FakeHttpTransport::reply(200, "{\"status\":\"Healthy\"}"));
    });
    http.route("POST", url + "/predictions/fast", [keyed](const HttpRequest& r) {
      return keyed(r, FakeHttpTransport::reply(200, "{\"predictions\":[{\"class\":1}]}"));
    });
  }
  void rotate(const std::string& to) {
    std::lock_guard<std::mutex> lock(*mu);
    *key = to;
  }
};

void write_key_file(const std::string& path, const std::string& inference) {
  std::ofstream(path + ".tmp") << R"({"management": {"key": "m"}, "inference": {"key": ")" << inference << R"("}})";
  std::filesystem::rename(path + ".tmp", path);
}

}  // namespace

TEST_CASE(
    "TorchServe backend (fake transport): a key refused before the file holds the new one waits for the file, "
    "then goes again, and a file that never changes fails the batch",
    "[serve][backend][token]") {
  const auto dir = std::filesystem::temp_directory_path() / ("lull-key-wait-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "key_file.json").string();
  write_key_file(path, "k1");
  TorchServeKeyFiles files(path);
  Rig rig;
  KeyedModelServer s0(rig.http, "http://10.0.0.1:8080");
  lull::serve::testing::QueryInputsForTest inputs;
  inputs.put(1, "x");
  inputs.put(2, "y");
  TorchServeOptions opts;
  opts.health_interval_ms = 3600 * 1000;  // pings only when the test calls check_health()
  opts.key_file = &files;
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, opts, std::move(rig.owned));
  ResultLog log;
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 1);

  // TorchServe's order: the new key is in force, the file not rewritten yet.
  s0.rotate("k2");
  backend.start_batch(inputs.batch(0, 0, {1}));
  REQUIRE(eventually([&] { return *s0.refused >= 1; }, milliseconds(5000)));
  CHECK(log.wait_for(1, milliseconds(50)).empty());  // waiting for the file, not failed
  write_key_file(path, "k2");
  auto results = log.wait_for(1, milliseconds(5000));
  REQUIRE(results.size() == 1);
  CHECK(results[0].ok);
  CHECK(rig.http.requests().back().bearer_token == "k2");
  CHECK(backend.worker_up(0));

  // A key the file never replaces: sent again once the wait is over, refused again, the batch fails.
  s0.rotate("k3");
  const int refused_before = *s0.refused;
  backend.start_batch(inputs.batch(0, 0, {2}));
  results = log.wait_for(2, milliseconds(5000));
  REQUIRE(results.size() == 2);
  CHECK_FALSE(results[1].ok);
  CHECK(results[1].error.find("refused the inference token (HTTP 400)") != std::string::npos);
  CHECK(*s0.refused - refused_before == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "TorchServe backend (fake transport): one ping refused for its key keeps the worker up, two in a row take it "
    "down with the refusal as the reason, the file's new key brings it back",
    "[serve][backend][token]") {
  const auto dir = std::filesystem::temp_directory_path() / ("lull-ping-key-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "key_file.json").string();
  write_key_file(path, "k1");
  TorchServeKeyFiles files(path);
  Rig rig;
  FakeHttpTransport& http = rig.http;
  KeyedModelServer s0(rig.http, "http://10.0.0.1:8080");
  TorchServeOptions opts;
  opts.health_interval_ms = 3600 * 1000;
  opts.key_file = &files;
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, opts, std::move(rig.owned));
  REQUIRE(backend.start() == 1);
  s0.rotate("k2");  // the file not rewritten yet
  backend.check_health();
  REQUIRE(http.wait_idle());
  CHECK(*s0.refused == 1);
  CHECK(backend.worker_up(0));
  backend.check_health();
  REQUIRE(http.wait_idle());
  CHECK_FALSE(backend.worker_up(0));
  CHECK(backend.down_reason(0).find("refused the inference token (HTTP 400)") != std::string::npos);
  write_key_file(path, "k2");
  backend.check_health();  // re-reads the file, pings with its key
  REQUIRE(http.wait_idle());
  CHECK(backend.worker_up(0));
  backend.stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("TorchServe backend (fake transport): an unreachable worker starts out of rotation", "[serve][backend]") {
  Rig rig;
  FakeModelServer s0(rig.http, "http://10.0.0.1:8080", "fast");
  lull::serve::testing::QueryInputsForTest inputs;
  const std::string dead = "http://10.0.0.9:8080";  // no route: connection refused
  TorchServeBackend backend({{s0.url, s0.url}, {dead, dead}}, {"fast"}, {}, std::move(rig.owned));
  CHECK(backend.start() == 1);
  CHECK(backend.worker_up(0));
  CHECK_FALSE(backend.worker_up(1));
}

namespace {

// A v2 model server "fast" at `url` on the fake that refuses a whole request
// holding an input with "poison" in it (400 {"error": ...}, as KServe, MLServer
// and Triton do), else answers {"class": len(input)} per input. Counts the
// infer requests and how often each input text was sent.
struct WholeBatchRefuser {
  std::string url;
  std::shared_ptr<std::atomic<int>> requests = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
  std::shared_ptr<std::map<std::string, int>> sent = std::make_shared<std::map<std::string, int>>();
  int status = 400;

  WholeBatchRefuser(FakeHttpTransport& http, std::string base, int refusal_status = 400)
      : url(std::move(base)), status(refusal_status) {
    http.route("GET", url + "/v2/models/fast/ready",
               [](const HttpRequest&) { return FakeHttpTransport::reply(200, "{\"ready\":true}"); });
    http.route("POST", url + "/v2/models/fast/infer",
               [requests = requests, mu = mu, sent = sent, status = status](const HttpRequest& r) {
                 ++*requests;
                 JsonValue body;
                 const JsonValue* inputs = parse_json(r.body, &body) ? json_field(body, "inputs") : nullptr;
                 const JsonValue* data = inputs ? json_field(inputs->list_value().values(0), "data") : nullptr;
                 if (!data) return FakeHttpTransport::reply(400, "{\"error\":\"no data\"}");
                 std::string outputs, refused;
                 int n = 0;
                 for (const auto& e : data->list_value().values()) {
                   {
                     std::lock_guard<std::mutex> lock(*mu);
                     ++(*sent)[e.string_value()];
                   }
                   if (e.string_value().find("poison") != std::string::npos && refused.empty())
                     refused = "row " + std::to_string(n) + " holds poison";
                   if (n++) outputs += ",";
                   outputs += json_quoted("{\"class\":" + std::to_string(e.string_value().size()) + "}");
                 }
                 if (!refused.empty()) return FakeHttpTransport::reply(status, "{\"error\":\"" + refused + "\"}");
                 return FakeHttpTransport::reply(200,
                                                 "{\"outputs\":[{\"name\":\"output\",\"datatype\":\"BYTES\","
                                                 "\"shape\":[" +
                                                     std::to_string(n) + "],\"data\":[" + outputs + "]}]}");
               });
  }
};

}  // namespace

TEST_CASE(
    "HTTP backend (fake transport): a batch the model refuses whole is halved until each refused input is "
    "alone: it gets the model's status and message, the rest are served, the worker stays",
    "[serve][backend][refusal]") {
  Rig rig;
  WholeBatchRefuser s0(rig.http, "http://10.0.0.1:8000");
  lull::serve::testing::QueryInputsForTest inputs;
  const int n = 11;
  for (int id = 1; id <= n; ++id)
    inputs.put(id, id == 3 || id == 8 ? "poison-" + std::to_string(id) : std::string(static_cast<size_t>(id), 'q'));
  lull::v2::V2Wire wire;
  TorchServeOptions o;
  o.wire = &wire;
  o.outlier.eject_after_failures = 1;  // a refusal counted as a fault would eject at once
  TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, o, std::move(rig.owned));
  ResultLog log;
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 1);
  std::vector<lull::core::QueryId> ids;
  for (int id = 1; id <= n; ++id) ids.push_back(static_cast<lull::core::QueryId>(id));
  for (int round = 0; round < 3; ++round) {
    backend.start_batch(inputs.batch(0, 0, ids));
    const auto results = log.wait_for(static_cast<size_t>(round + 1), milliseconds(5000));
    REQUIRE(results.size() == static_cast<size_t>(round + 1));
    const auto& r = results.back();
    INFO(r.error);
    REQUIRE(r.ok);
    REQUIRE(r.outputs.size() == static_cast<size_t>(n));
    REQUIRE(r.input_status.size() == static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const int id = i + 1;
      if (id == 3 || id == 8) {
        CHECK(r.input_status[static_cast<size_t>(i)] == 400);
        CHECK(r.outputs[static_cast<size_t>(i)].find("row 0 holds poison") != std::string::npos);
      } else {
        CHECK(r.input_status[static_cast<size_t>(i)] == 0);
        CHECK(r.outputs[static_cast<size_t>(i)] == "{\"class\":" + std::to_string(id) + "}");
      }
    }
  }
  CHECK(backend.worker_up(0));
  CHECK(backend.stats(0).ejections == 0);
  // Bounded: no input sent more than 1 + ceil(log2 11) = 5 times per batch.
  for (const auto& [text, times] : *s0.sent) CHECK(times <= 3 * 5);
  CHECK((*s0.sent)["poison-3"] >= 3 * 2);  // sent whole, then alone at least
}

TEST_CASE("HTTP backend (fake transport): a 404 or 429 for a batch is not split: the batch fails as before",
          "[serve][backend][refusal]") {
  for (int status : {404, 429}) {
    Rig rig;
    WholeBatchRefuser s0(rig.http, "http://10.0.0.1:8000", status);
    lull::serve::testing::QueryInputsForTest inputs;
    inputs.put(1, "fine");
    inputs.put(2, "poison");
    lull::v2::V2Wire wire;
    TorchServeOptions o;
    o.wire = &wire;
    TorchServeBackend backend({{s0.url, s0.url}}, {"fast"}, o, std::move(rig.owned));
    ResultLog log;
    backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
    REQUIRE(backend.start() == 1);
    backend.start_batch(inputs.batch(0, 0, {1, 2}));
    const auto results = log.wait_for(1, milliseconds(5000));
    REQUIRE(results.size() == 1);
    CHECK_FALSE(results[0].ok);
    CHECK(results[0].error.find("HTTP " + std::to_string(status)) != std::string::npos);
    CHECK(*s0.requests == 1);
  }
}
