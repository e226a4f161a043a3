// lull serve over the Open Inference Protocol end to end: the stand-in
// model servers behind it, a v2 client with only Python's standard library
// (docs/v2_client.py, Debian's /usr/bin/python3) in front: health, metadata,
// inference answered in v2 form by a model of the policy set, and the bad
// requests the protocol names refused with its error form and 4xx.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "test/support/lull_serve_process.h"
#include "test/support/model_server_process.h"
#include "test/support/cli_runner.h"
#include "test/support/skip.h"

using namespace lull::serve::testing;
namespace fs = std::filesystem;

TEST_CASE("lull serve: a standard-library Python client speaks v2 to it", "[serve][v2][python]") {
  if (access("/usr/bin/python3", X_OK) != 0) {
    LULL_SKIP("/usr/bin/python3 is not installed");
  }
  const auto dir = (fs::temp_directory_path() / ("lull-v2-serve-" + std::to_string(getpid()))).string();
  fs::create_directories(dir);
  const std::string profile = source_path("test/data/replay_profile.json");
  auto compiled = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " + profile +
                                      " --slo-ms 200 --workers 1 --load-qps 10:20:10 --out " + dir + "/set.pb");
  REQUIRE(compiled.code == 0);
  ModelServerProcess server({"--replay-profile", profile});
  LullServeProcess lull({"--policies", dir + "/set.pb", "--servers", server.url()}, dir + "/serve.log", dir + "/port");
  auto run = lull::test::run_cli("/usr/bin/python3 " + source_path("docs/v2_client.py") + " " + lull.base() +
                                 " image-classification --check");
  INFO(run.output);
  CHECK(run.code == 0);
  CHECK(run.output.find("FAIL") == std::string::npos);
  CHECK(run.output.find("ok   wrong datatype: 400") != std::string::npos);
  CHECK(run.output.find("ok   shape mismatch: 400") != std::string::npos);
  CHECK(run.output.find("ok   missing inputs: 400") != std::string::npos);
  // The answer names a model of the set.
  bool named = false;
  for (const char* model : {"tiny_net", "small_net", "medium_net", "large_net"})
    named = named || run.output.find(std::string("prediction of ") + model + ":") != std::string::npos;
  CHECK(named);
  // One query reached the models (the bad requests never did).
  CHECK(lull.metrics().find("lull_queries_total 1\n") != std::string::npos);
  auto text = lull::test::run_cli("/usr/bin/python3 " + source_path("docs/v2_client.py") + " " + lull.base() +
                                  " image-classification --text 'hello world'");
  CHECK(text.code == 0);
  CHECK(text.output.find("_net: {") != std::string::npos);
}
