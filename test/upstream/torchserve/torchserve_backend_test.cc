// The TorchServe backend against a real stand-in model server killed
// mid-batch and restarted: what only a real connection shows (curl's errors
// on a lost connection, in-flight batches failed). Its other rules run in
// process over the fake transport: torchserve_backend_logic_test.cc.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "test/support/backend_test_support.h"
#include "test/support/model_server_process.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"

using namespace lull::torchserve;
using namespace lull::serve::testing;
using lull::core::BatchRequest;
using std::chrono::milliseconds;

TEST_CASE("TorchServe backend: a killed server fails its in-flight batches, goes down, rejoins after restart",
          "[serve][backend][fault]") {
  ModelServerProcess s0({"--fake", "slow:400:0"});
  lull::serve::testing::QueryInputsForTest inputs;
  for (int id = 1; id <= 4; ++id) inputs.put(id, "x");
  TorchServeOptions opts;
  opts.health_interval_ms = 100;
  opts.health_timeout_ms = 300;
  TorchServeBackend backend({{s0.url(), s0.url()}}, {"slow"}, opts);
  ResultLog log;
  std::atomic<int> downs{0}, ups{0};
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  backend.set_health_handler([&](int, bool up) { (up ? ups : downs)++; });
  REQUIRE(backend.start() == 1);
  ups = 0;

  backend.start_batch(inputs.batch(0, 0, {1, 2}));
  backend.start_batch(inputs.batch(0, 0, {3, 4}));  // queued behind the first on the server
  // Both in flight (each takes 400 ms on the server) when it dies.
  REQUIRE(eventually([&] { return backend.stats(0).batches_in_flight == 2; }, milliseconds(3000)));
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
  backend.start_batch(inputs.batch(0, 0, {1}));
  auto third = log.wait_for(3, milliseconds(1000));
  REQUIRE(third.size() == 3);
  CHECK(third[2].error.find("is down") != std::string::npos);

  s0.restart();
  CHECK(eventually([&] { return backend.worker_up(0); }, milliseconds(5000)));
  CHECK(ups == 1);
  backend.start_batch(inputs.batch(0, 0, {1, 2}));
  auto after = log.wait_for(4, milliseconds(3000));
  REQUIRE(after.size() == 4);
  CHECK(after[3].ok);
}
