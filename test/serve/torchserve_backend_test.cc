#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "backend_test_support.h"
#include "model_server_process.h"
#include "runtime/query_inputs.h"
#include "runtime/torchserve/torchserve_backend.h"

using namespace lull::serve;
using namespace lull::serve::testing;
using lull::runtime::BatchRequest;
using std::chrono::milliseconds;

TEST_CASE("TorchServe backend: one request per batch, answers split back in order", "[serve][backend]") {
  ModelServerProcess s0({"--fake", "fast:2:0.1"}), s1({"--fake", "fast:2:0.1"});
  QueryInputs inputs;
  // The fake predicts len(input) % 1000, so each answer names its own query.
  for (int id = 1; id <= 12; ++id) inputs.put(id, std::string(static_cast<size_t>(id * 3), 'q'));
  TorchServeBackend backend({{s0.url(), s0.url()}, {s1.url(), s1.url()}}, {"fast"}, inputs);
  ResultLog log;
  backend.set_completion_handler([&](const lull::runtime::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 2);

  backend.start_batch(batch(0, 0, {1, 2, 3, 4, 5}));
  backend.start_batch(batch(1, 0, {6, 7, 8, 9, 10, 11, 12}));
  auto results = log.wait_for(2, milliseconds(5000));
  REQUIRE(results.size() == 2);
  for (const auto& r : results) {
    CHECK(r.ok);
    REQUIRE(r.outputs.size() == r.queries.size());  // predictions travel in the result
    for (size_t i = 0; i < r.queries.size(); ++i)
      CHECK(r.outputs[i] == "{\"class\":" + std::to_string(r.queries[i] * 3) + ",\"score\":1.0}");
  }
  CHECK(backend.stats(0).batches_ok == 1);
  CHECK(backend.stats(1).batches_ok == 1);
}

TEST_CASE("TorchServe backend: a model the server lacks fails the batch, not the worker", "[serve][backend]") {
  ModelServerProcess s0({"--fake", "fast:1:0"});
  QueryInputs inputs;
  inputs.put(1, "x");
  TorchServeBackend backend({{s0.url(), s0.url()}}, {"fast", "absent"}, inputs);
  ResultLog log;
  backend.set_completion_handler([&](const lull::runtime::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 1);
  backend.start_batch(batch(0, 1, {1}));
  auto results = log.wait_for(1, milliseconds(3000));
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK(results[0].outputs.empty());
  CHECK(results[0].error.find("HTTP 404") != std::string::npos);
  CHECK(backend.worker_up(0));
  CHECK(backend.stats(0).last_error.find("HTTP 404") != std::string::npos);
}

TEST_CASE("TorchServe backend: a killed server fails its in-flight batches, goes down, rejoins after restart",
          "[serve][backend][fault]") {
  ModelServerProcess s0({"--fake", "slow:400:0"});
  QueryInputs inputs;
  for (int id = 1; id <= 4; ++id) inputs.put(id, "x");
  TorchServeOptions opts;
  opts.health_interval_ms = 100;
  opts.health_timeout_ms = 300;
  TorchServeBackend backend({{s0.url(), s0.url()}}, {"slow"}, inputs, opts);
  ResultLog log;
  std::atomic<int> downs{0}, ups{0};
  backend.set_completion_handler([&](const lull::runtime::BatchResult& r) { log.add(r); });
  backend.set_health_handler([&](int, bool up) { (up ? ups : downs)++; });
  REQUIRE(backend.start() == 1);
  ups = 0;

  backend.start_batch(batch(0, 0, {1, 2}));
  backend.start_batch(batch(0, 0, {3, 4}));  // queued behind the first on the server
  std::this_thread::sleep_for(milliseconds(100));
  s0.kill_now();
  auto results = log.wait_for(2, milliseconds(3000));
  REQUIRE(results.size() == 2);  // every query is accounted for
  for (const auto& r : results) {
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.error.empty());
  }
  CHECK(eventually([&] { return !backend.worker_up(0); }, milliseconds(2000)));
  CHECK(downs == 1);

  // A batch sent while it is down fails at once, asynchronously.
  backend.start_batch(batch(0, 0, {1}));
  auto third = log.wait_for(3, milliseconds(1000));
  REQUIRE(third.size() == 3);
  CHECK(third[2].error.find("is down") != std::string::npos);

  s0.restart();
  CHECK(eventually([&] { return backend.worker_up(0); }, milliseconds(5000)));
  CHECK(ups == 1);
  backend.start_batch(batch(0, 0, {1, 2}));
  auto after = log.wait_for(4, milliseconds(3000));
  REQUIRE(after.size() == 4);
  CHECK(after[3].ok);
}

TEST_CASE("TorchServe backend: a slow server is timed out, not waited on", "[serve][backend][fault]") {
  ModelServerProcess s0({"--fake", "fast:0:0", "--delay-ms", "5000"});
  QueryInputs inputs;
  inputs.put(1, "x");
  TorchServeOptions opts;
  opts.batch_timeout_ms = 300;
  opts.health_interval_ms = 10000;  // keep pings out of this test's way
  opts.outlier.eject_after_failures = 1;  // one hung batch ejects it (outlier_ejection_test.cc: counting)
  TorchServeBackend backend({{s0.url(), s0.url()}}, {"fast"}, inputs, opts);
  ResultLog log;
  backend.set_completion_handler([&](const lull::runtime::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 1);  // ping does not go through the model, so it is fast
  const auto t0 = std::chrono::steady_clock::now();
  backend.start_batch(batch(0, 0, {1}));
  auto results = log.wait_for(1, milliseconds(3000));
  const auto waited = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK(waited < milliseconds(1500));
  CHECK_FALSE(backend.worker_up(0));
  CHECK(backend.stats(0).last_error.find("timed out") != std::string::npos);
  CHECK(backend.stats(0).ejections == 1);
}

TEST_CASE("TorchServe backend: an unreachable worker starts out of rotation", "[serve][backend]") {
  ModelServerProcess s0({"--fake", "fast:0:0"});
  QueryInputs inputs;
  const std::string dead = "http://127.0.0.1:" + std::to_string(free_port());
  TorchServeBackend backend({{s0.url(), s0.url()}, {dead, dead}}, {"fast"}, inputs);
  CHECK(backend.start() == 1);
  CHECK(backend.worker_up(0));
  CHECK_FALSE(backend.worker_up(1));
}
