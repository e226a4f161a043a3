// The HTTP batch backend over the Open Inference Protocol (V2Wire) against
// the stand-in server in --only-v2 mode (TorchServe's routes answer 404
// there, so nothing passes unless it went over v2); and `lull profile
// --backend v2` against it.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "test/support/backend_test_support.h"
#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/upstream/v2/v2_codec.h"
#include "runtime/upstream/v2/v2_model_check.h"
#include "runtime/upstream/v2/v2_model_control.h"
#include "runtime/upstream/v2/v2_wire.h"
#include "test/support/cli_runner.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::v2;
using namespace lull::serve::testing;
using lull::core::BatchRequest;
using std::chrono::milliseconds;

namespace {

// The backend over the v2 wire on one server, its results collected.
struct V2Rig {
  V2Wire wire;
  ResultLog log;
  std::unique_ptr<TorchServeBackend> backend;
  V2Rig(const std::string& url, TorchServeOptions o = {}) {
    o.wire = &wire;
    backend = std::make_unique<TorchServeBackend>(std::vector<WorkerEndpoint>{{url, url}},
                                                  std::vector<std::string>{"fast"}, o);
    backend->set_completion_handler([this](const lull::core::BatchResult& r) { log.add(r); });
  }
};

}  // namespace

TEST_CASE("v2 backend: one infer request per batch, answers and per-input errors split back in order", "[serve][v2]") {
  ModelServerProcess s0({"--fake", "fast:2:0.1", "--only-v2", "--log-requests", "/dev/null"});
  lull::serve::testing::QueryInputsForTest inputs;
  // The fake predicts len(input) % 1000, so each answer names its own query.
  for (int id = 1; id <= 5; ++id) inputs.put(id, std::string(static_cast<size_t>(id * 3), 'q'));
  inputs.put(6, "LULL-MALFORMED input");              // the stand-in's models reject it alone
  inputs.put(7, std::string("\xff\xfe\x00\x01", 4));  // not UTF-8: sent base64
  V2Rig rig(s0.url());
  TorchServeBackend& backend = *rig.backend;
  ResultLog& log = rig.log;
  REQUIRE(backend.start() == 1);  // GET /v2/models/fast/ready
  backend.start_batch(inputs.batch(0, 0, {1, 2, 3, 4, 5, 6, 7}));
  const auto results = log.wait_for(1, milliseconds(5000));
  REQUIRE(results.size() == 1);
  const auto& r = results[0];
  INFO(r.error);
  REQUIRE(r.ok);
  REQUIRE(r.outputs.size() == 7);
  for (size_t i = 0; i < 5; ++i)
    CHECK(r.outputs[i] == "{\"class\":" + std::to_string(r.queries[i] * 3) + ",\"score\":1.0}");
  REQUIRE(r.input_status.size() == 7);
  CHECK(r.input_status[5] == 400);
  CHECK(r.outputs[5].find("\"InvalidInput\"") != std::string::npos);
  CHECK(r.input_status[6] == 0);
  CHECK(r.outputs[6] == "{\"class\":4,\"score\":1.0}");  // its 4 bytes arrived whole
  CHECK(backend.worker_up(0));
}

TEST_CASE("v2 backend: a worker whose model is unloaded leaves rotation and rejoins once it is loaded", "[serve][v2]") {
  ModelServerProcess s0({"--fake", "fast:1:0", "--only-v2"});
  TorchServeOptions o;
  o.health_interval_ms = 50;
  V2Rig rig(s0.url(), o);
  TorchServeBackend& backend = *rig.backend;
  REQUIRE(backend.start() == 1);
  HttpClient http;
  V2ModelControl control(http);
  control.unload(s0.url(), "fast");
  CHECK(eventually([&] { return !backend.worker_up(0); }, milliseconds(3000)));
  CHECK(backend.stats(0).last_error.find("ping: HTTP 404") != std::string::npos);
  control.load(s0.url(), "fast");
  CHECK(eventually([&] { return backend.worker_up(0); }, milliseconds(3000)));
}

TEST_CASE("v2 backend: a batch mixing bytes and tensor layouts goes as one request per run, in order", "[serve][v2]") {
  const std::string log_path = lull::test::write_temp("v2_requests.log", "");
  // --tensor-inputs: a row of tensors is a query whose bytes are the row as JSON.
  ModelServerProcess s0({"--fake", "fast:1:0", "--only-v2", "--tensor-inputs", "--log-requests", log_path});
  lull::serve::testing::QueryInputsForTest inputs;
  inputs.put(1, "bytes");
  inputs.put(2, R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1,2],"data":[1,2]}]})");
  inputs.put(3, R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1,2],"data":[[30,40]]}]})");
  inputs.put(4, R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]})");
  inputs.put(5, "more bytes");
  V2Rig rig(s0.url());
  TorchServeBackend& backend = *rig.backend;
  ResultLog& log = rig.log;
  REQUIRE(backend.start() == 1);
  backend.start_batch(inputs.batch(0, 0, {1, 2, 3, 4, 5}));
  const auto results = log.wait_for(1, milliseconds(5000));
  REQUIRE(results.size() == 1);
  INFO(results[0].error);
  REQUIRE(results[0].ok);
  // The fake predicts len(bytes) % 1000: the raw inputs' lengths, and the
  // rows' JSON ({"x":[1,2]}: 11 bytes; {"x":[30,40]}: 13; {"x":[1,2,3]}: 13).
  std::vector<std::string> want;
  for (int c : {5, 11, 13, 13, 10}) want.push_back("{\"class\":" + std::to_string(c) + ",\"score\":1.0}");
  CHECK(results[0].outputs == want);
  // bytes | x INT32 [1,2] twice | x FP32 [1,3] | bytes: four runs, four requests.
  std::ifstream in(log_path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string t = text.str();
  size_t requests = 0;
  for (size_t at = t.find("/v2/models/fast/infer"); at != std::string::npos;
       at = t.find("/v2/models/fast/infer", at + 1))
    ++requests;
  CHECK(requests == 4);
}

TEST_CASE("v2 backend: to a server listing binary_tensor_data, bytes batches go raw", "[serve][v2][binary]") {
  const std::string log_path = lull::test::write_temp("v2_binary_requests.log", "");
  ModelServerProcess s0({"--fake", "fast:1:0", "--only-v2", "--binary-tensors", "--log-requests", log_path});
  ModelServerProcess plain({"--fake", "fast:1:0", "--only-v2"});
  // The start check learns which servers take it (GET /v2's extensions).
  HttpClient http;
  std::set<std::string> binary;
  V2ModelCheckOptions check;
  check.binary_servers = &binary;
  check_v2_models_ready(http, {{s0.url(), s0.url()}, {plain.url(), plain.url()}}, {"fast"}, check);
  CHECK(binary == std::set<std::string>{s0.url()});
  lull::serve::testing::QueryInputsForTest inputs;
  const std::string image("\x89PNG\r\n\x1a\n\x00\xff\xfe\x80\x01", 13);  // not UTF-8
  inputs.put(1, image);
  inputs.put(2, "hello");
  V2Rig rig(s0.url());
  rig.wire.learn_binary_servers(binary);
  CHECK(rig.wire.sends_binary(s0.url()));
  CHECK_FALSE(rig.wire.sends_binary(plain.url()));
  REQUIRE(rig.backend->start() == 1);
  rig.backend->start_batch(inputs.batch(0, 0, {1, 2}));
  const auto results = rig.log.wait_for(1, milliseconds(5000));
  REQUIRE(results.size() == 1);
  INFO(results[0].error);
  REQUIRE(results[0].ok);
  // The fake predicts len(bytes) % 1000: the image arrived whole, raw.
  CHECK(results[0].outputs == std::vector<std::string>{"{\"class\":13,\"score\":1.0}", "{\"class\":5,\"score\":1.0}"});
  size_t header = 0;
  const std::string hello = "hello";
  const std::string body = encode_v2_bytes_binary_request({&image, &hello}, "input", &header);
  std::ifstream in(log_path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "/v2/models/fast/infer " + std::to_string(body.size()) + "\n");
  CHECK(body.size() < encode_v2_bytes_request({&image, &hello}, "input").size());
}

TEST_CASE("v2 backend: MLServer's 400 'not ready' fails the batch for another worker, not as refusals",
          "[serve][v2][not_ready]") {
  const std::string flag = lull::test::write_temp("v2_not_ready", "") + ".on";
  ModelServerProcess s0({"--fake", "fast:1:0", "--only-v2", "--whole-batch-refusal", "--not-ready-file", flag});
  lull::serve::testing::QueryInputsForTest inputs;
  for (int id = 1; id <= 4; ++id) inputs.put(id, "query " + std::to_string(id));
  V2Rig rig(s0.url());
  REQUIRE(rig.backend->start() == 1);
  std::ofstream(flag) << "";  // the model is loading again from now on
  rig.backend->start_batch(inputs.batch(0, 0, {1, 2, 3, 4}));
  const auto results = rig.log.wait_for(1, milliseconds(5000));
  std::remove(flag.c_str());
  REQUIRE(results.size() == 1);
  INFO(results[0].error);
  CHECK_FALSE(results[0].ok);  // retried elsewhere by the session, not answered 400 per query
  CHECK(results[0].input_status.empty());
  CHECK(results[0].error.find("not ready yet") != std::string::npos);
  const V2Wire wire;
  HttpResponse r;
  r.status = 400;
  r.body = R"({"error": "Model fast is not ready yet."})";
  CHECK(wire.not_ready(r));
  r.body = R"({"error": "input 'x': not base64"})";
  CHECK_FALSE(wire.not_ready(r));
}

TEST_CASE("lull profile --backend v2 measures through /v2/models/{m}/infer", "[serve][cli][v2]") {
  ModelServerProcess server({"--fake", "fast:1:0.5", "--only-v2"});
  const std::string acc = lull::test::write_temp("profile_acc_v2.json", "{\"fast\": 0.7}");
  const std::string flags = " --worker " + server.url() +
                            " --models fast --max-batch 2 --samples 2 --warmup 0 --pause-ms 0 --accuracy " + acc +
                            " --out -";
  const auto r = lull::test::run_lull("profile --backend v2" + flags);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"name\": \"fast\"") != std::string::npos);
  // The TorchServe API is not there: the default backend fails, naming the path.
  const auto ts = lull::test::run_lull("profile" + flags);
  CHECK(ts.exit_code != 0);
  CHECK(ts.err.find("/predictions/fast") != std::string::npos);
  CHECK(lull::test::run_lull("profile --backend grpc" + flags).exit_code == 2);
}
