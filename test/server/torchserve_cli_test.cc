// `lull profile` and `lull serve` against the stand-in as a TorchServe: --inputs sends the files of a
// directory (cycled in name order) and --torchserve-token-file the inference
// key; a refused token is one line and exit 2, for lull profile and at
// lull serve's start-up.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "test/support/model_server_process.h"
#include "runtime/upstream/torchserve/request_split.h"
#include "test/support/cli_runner.h"

using namespace lull::torchserve;
using namespace lull::serve::testing;
namespace fs = std::filesystem;

namespace {

std::string temp_dir() {
  const auto d = fs::temp_directory_path() / ("lull-profile-cli-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d.string();
}

std::string profile_args(const std::string& url, const std::string& dir) {
  std::ofstream(dir + "/acc.json") << R"({"fast": 0.5})";
  return std::string(LULL_BINARY) + " profile --worker " + url +
         " --models fast --batches 1,2 --max-batch 2 --samples 2 --warmup 0 --pause-ms 0 --accuracy " + dir +
         "/acc.json --out " + dir + "/profile.json";
}

}  // namespace

TEST_CASE("lull profile --inputs sends the directory's files in turn", "[serve][profile]") {
  const std::string dir = temp_dir(), log_path = dir + "/requests.log";
  fs::remove(log_path);
  ModelServerProcess server({"--fake", "fast:0:0", "--log-requests", log_path});
  const std::string inputs = source_path("profiles/inputs");
  auto run = lull::test::run_cli(profile_args(server.url(), dir) + " --inputs " + inputs);
  INFO(run.output);
  REQUIRE(run.code == 0);

  std::vector<size_t> files;  // the images' sizes, in name order
  std::vector<fs::path> paths;
  for (const auto& e : fs::directory_iterator(inputs))
    if (e.path().extension() != ".md") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) files.push_back(fs::file_size(p));
  REQUIRE(files.size() == 4);
  // Batch 1 twice, then batch 2 twice: the queries take files 0, 1, (2, 3), (0, 1).
  const std::vector<std::vector<size_t>> expected{{files[0]}, {files[1]}, {files[2], files[3]}, {files[0], files[1]}};
  std::ifstream in(log_path);
  std::string path;
  std::int64_t bytes;
  std::vector<std::int64_t> got;
  while (in >> path >> bytes) got.push_back(bytes);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == encoded_batch_request_size(expected[i]));

  auto empty = lull::test::run_cli(profile_args(server.url(), dir) + " --inputs " + dir + "/no-such-dir");
  CHECK(empty.code == 2);
  CHECK(empty.output.find("--inputs " + dir + "/no-such-dir: not a directory") != std::string::npos);
}

TEST_CASE("lull profile: the token is sent, and a refused one is one line and exit 2", "[serve][profile][token]") {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/key_file.json") << R"({"management": {"key": "m1"}, "inference": {"key": "i2"}})";
  ModelServerProcess server({"--fake", "fast:0:0", "--token-file", dir + "/key_file.json"});
  auto with =
      lull::test::run_cli(profile_args(server.url(), dir) + " --torchserve-token-file " + dir + "/key_file.json");
  INFO(with.output);
  CHECK(with.code == 0);
  auto without = lull::test::run_cli(profile_args(server.url(), dir));
  INFO(without.output);
  CHECK(without.code == 2);
  CHECK(without.output.find("lull profile: model server " + server.url() +
                            " refused the inference token (HTTP 400): no token was sent") != std::string::npos);
}

TEST_CASE("lull serve: a refused token stops start-up with one line and exit 2", "[serve][token]") {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/key_file.json") << R"({"management": {"key": "m1"}, "inference": {"key": "i2"}})";
  std::ofstream(dir + "/wrong.json") << R"({"management": {"key": "m0"}, "inference": {"key": "i2"}})";
  const std::string profile = source_path("test/data/replay_profile.json");
  auto compiled = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " + profile +
                                      " --slo-ms 200 --workers 1 --load-qps 5:20:5 --out " + dir + "/set.pb");
  INFO(compiled.output);
  REQUIRE(compiled.code == 0);
  ModelServerProcess server({"--replay-profile", profile, "--token-file", dir + "/key_file.json"});
  const std::string serve = std::string(LULL_BINARY) + " serve --policies " + dir + "/set.pb --servers " +
                            server.url() + " --listen 127.0.0.1:0";
  for (const std::string& flag : {std::string(), " --torchserve-token-file " + dir + "/wrong.json"}) {
    auto run = lull::test::run_cli(serve + flag);
    INFO(run.output);
    CHECK(run.code == 2);
    CHECK(std::count(run.output.begin(), run.output.end(), '\n') == 1);
    CHECK(run.output.find("lull serve: model server " + server.url() + " refused the management token (HTTP 400): " +
                          (flag.empty() ? "no token was sent" : "the management key")) == 0);
  }
}
