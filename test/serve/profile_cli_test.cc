// `lull profile` against a stand-in model server, its stderr going to a file
// (not a terminal): plain progress lines, no carriage returns, and '-' as
// stdout for --out. The terminal case is tested on ProgressLine itself
// (test/cli/progress_line_test.cc).
#include <catch2/catch.hpp>

#include "model_server_process.h"
#include "test/support/cli_runner.h"

using lull::serve::testing::ModelServerProcess;

TEST_CASE("lull profile: no carriage return in a log, and --out - writes the profile to stdout", "[serve][cli][progress]") {
  ModelServerProcess server({"--fake", "fast:1:0.5", "--fake", "slow:2:1"});
  const std::string acc = lull::test::write_temp("profile_acc.json", "{\"fast\": 0.7, \"slow\": 0.8}");
  const auto r = lull::test::run_lull("profile --worker " + server.url() +
                                      " --models fast,slow --max-batch 2 --samples 3 --warmup 0 --pause-ms 0 --accuracy " +
                                      acc + " --out -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find('\r') == std::string::npos);
  // A line per (model, batch size), then each model's medians.
  CHECK(r.err.find("profile: fast batch 1/2") != std::string::npos);
  CHECK(r.err.find("profile: slow batch 2/2") != std::string::npos);
  CHECK(r.err.find("profile: slow: median ms") != std::string::npos);
  CHECK(r.out.find("\"name\": \"slow\"") != std::string::npos);
}
