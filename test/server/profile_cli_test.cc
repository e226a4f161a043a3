// `lull profile` against a stand-in model server, its stderr going to a file
// (not a terminal): plain progress lines, no carriage returns, and '-' as
// stdout for --out. The terminal case is tested on ProgressLine itself
// (test/cli/progress_line_test.cc).
#include <catch2/catch.hpp>

#include "test/support/model_server_process.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "test/support/cli_runner.h"

using lull::serve::testing::ModelServerProcess;

TEST_CASE("lull profile: no carriage return in a log, and --out - writes the profile to stdout",
          "[serve][cli][progress]") {
  ModelServerProcess server({"--fake", "fast:1:0.5", "--fake", "slow:2:1"});
  const std::string acc = lull::test::write_temp("profile_acc.json", "{\"fast\": 0.7, \"slow\": 0.8}");
  const auto r = lull::test::run_lull(
      "profile --worker " + server.url() +
      " --models fast,slow --max-batch 2 --samples 3 --warmup 0 --pause-ms 0 --accuracy " + acc + " --out -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find('\r') == std::string::npos);
  // A line per (model, batch size), then each model's medians.
  CHECK(r.err.find("profile: fast batch 1/2") != std::string::npos);
  CHECK(r.err.find("profile: slow batch 2/2") != std::string::npos);
  CHECK(r.err.find("profile: slow: median ms") != std::string::npos);
  CHECK(r.out.find("\"name\": \"slow\"") != std::string::npos);
}

TEST_CASE("lull profile: memory_mb from the management API (a real TorchVision model's parameter bytes)",
          "[serve][cli][torch]") {
  // shufflenet_v2_x0_5: 1.37 M float parameters plus batch-norm buffers, about 5.3 MiB.
  ModelServerProcess server({"--models", "shufflenet_v2_x0_5", "--image-size", "32"});
  const std::string acc = lull::test::write_temp("profile_acc_tv.json", "{\"shufflenet_v2_x0_5\": 0.6}");
  const auto r = lull::test::run_lull("profile --worker " + server.url() +
                                      " --models shufflenet_v2_x0_5 --max-batch 1 --samples 2 --warmup 0 --pause-ms 0 "
                                      "--inputs " LULL_SOURCE_DIR "/profiles/inputs --accuracy " +
                                      acc + " --out -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto at = r.out.find("\"memory_mb\": ");
  REQUIRE(at != std::string::npos);
  const double mb = std::stod(r.out.substr(at + 13));
  CHECK(mb > 5.0);
  CHECK(mb < 6.0);
  CHECK(r.err.find("memory 5 MiB") != std::string::npos);
}

TEST_CASE("model_memory_mb reads TorchServe's workers[].memoryUsage", "[serve]") {
  using lull::torchserve::model_memory_mb;
  CHECK(model_memory_mb(
            R"([{"modelName": "r", "workers": [{"id": "9000", "memoryUsage": 1048576}, {"memoryUsage": 3145728}]}])") ==
        3.0);
  CHECK(model_memory_mb(R"([{"modelName": "r", "workers": [{"id": "9000"}]}])") == 0.0);
  CHECK(model_memory_mb("not json") == 0.0);
}
