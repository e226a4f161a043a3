// `lull serve --autoscale`'s bad input: each is one line naming the flag and
// exit 2, before any worker starts (the happy path runs in
// experiments/autoscale_e2e.sh, ctest serve.autoscale_e2e).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "test/support/model_server_process.h"
#include "test/support/cli_runner.h"

using namespace lull::serve::testing;
namespace fs = std::filesystem;

TEST_CASE("lull serve --autoscale: bad flags are one line and exit 2", "[serve][autoscale]") {
  const auto dir = fs::temp_directory_path() / ("lull-serve-autoscale-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string lib = (dir / "lib.pb").string();
  auto compiled = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " +
                                      source_path("test/data/replay_profile.json") +
                                      " --slo-ms 100 --workers 1:2:1 --load-qps 10:40:10 --out " + lib);
  INFO(compiled.output);
  REQUIRE(compiled.code == 0);
  const std::string serve = std::string(LULL_BINARY) + " serve --policies " + lib + " --listen 127.0.0.1:0";
  const std::string server = "'python3 " + source_path("test/modelserver/lull_modelserver.py") + " --port {port}'";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "--servers is required (or --autoscale with a worker pool)"},
      {" --autoscale --servers http://127.0.0.1:1", "--servers with --autoscale"},
      {" --autoscale", "--worker-pool local needs --worker-command"},
      {" --autoscale --worker-pool docker --worker-command " + server, "--worker-pool: expected local or kubernetes"},
      {" --autoscale --worker-command 'python3 server.py --port 8080'", "no {port}"},
      {" --autoscale --worker-pool kubernetes", "--worker-pool kubernetes needs --k8s-api-server"},
      {" --autoscale --worker-pool kubernetes --k8s-api-server https://127.0.0.1:1 --k8s-deployment d --k8s-service s "
       "--k8s-call-budget-s 0",
       "--k8s-call-budget-s"},
      {" --autoscale --worker-pool kubernetes --k8s-api-server https://127.0.0.1:1 --k8s-deployment d --k8s-service s "
       "--k8s-not-ready-timeout-s 100000",
       "--k8s-not-ready-timeout-s"},
      {" --autoscale --worker-command " + server + " --autoscale-retry-s 0", "--autoscale-retry-s"},
      {" --autoscale --worker-command " + server + " --initial-workers 3", "3 initial workers is above"},
      {" --autoscale --worker-command " + server + " --max-violation 2", "--max-violation"},
      {" --autoscale --worker-command " + server + " --worker-log-dir " + (dir / "absent").string(),
       "--worker-log-dir " + (dir / "absent").string() + ": no such directory"},
  };
  for (const auto& [flags, message] : cases) {
    auto run = lull::test::run_cli(serve + flags);
    INFO(flags << "\n" << run.output);
    CHECK(run.code == 2);
    CHECK(std::count(run.output.begin(), run.output.end(), '\n') == 1);
    CHECK(run.output.find(message) != std::string::npos);
  }
  fs::remove_all(dir);
}
