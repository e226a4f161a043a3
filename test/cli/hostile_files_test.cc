// Every command that reads a file refuses a FIFO and /dev/zero in one line
// naming the file, at once (each run is bounded by `timeout`: before the
// bounded reader, a FIFO hung these commands and /dev/zero grew them to
// gigabytes). A --config that cannot be read is an error, never ignored.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>

#include "test/support/cli_runner.h"

namespace fs = std::filesystem;

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

std::string hostile_fifo() {
  static const std::string path = [] {
    const std::string p = lull::test::temp_dir() + "/hostile.fifo";
    fs::remove(p);
    REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
    return p;
  }();
  return path;
}

std::string tiny_policy() {
  static const std::string path = [] {
    const std::string out = lull::test::temp_dir() + "/hostile_tiny.pb";
    const auto r = lull::test::run_lull("compile --profiles " + kTiny +
                                        " --slo-ms 100 --workers 2 --load-qps 50 --device cpu --out " + out);
    REQUIRE(r.exit_code == 0);
    return out;
  }();
  return path;
}

// Runs `lull ARGS` (ARGS holds FILE where the hostile path goes) with the
// FIFO and with /dev/zero: a usage or input error (exit 2), one line naming
// the path and what it is. A lull that hangs on the file is killed by the
// 60 s hang guard (exit 137, not 2); no verdict on the time it took.
void expect_refused(const std::string& args_with_file) {
  std::vector<std::pair<std::string, std::string>> files = {{hostile_fifo(), "a FIFO (named pipe)"}};
  if (fs::exists("/dev/zero")) files.emplace_back("/dev/zero", "a character device");
  for (const auto& [path, what] : files) {
    std::string args = args_with_file;
    args.replace(args.find("FILE"), 4, path);
    const auto start = std::chrono::steady_clock::now();
    const auto r = lull::test::run_cli("timeout -s KILL 60 " + std::string(LULL_BINARY) + " " + args + " </dev/null");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO("lull " << args << "\n" << r.output << "(" << s << " s)");
    CHECK(r.code == 2);
    CHECK(lull::test::count_lines(r.output) == 1);
    CHECK(r.output.find(path + ": " + what + ", not a regular file") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("hostile files: compile --profiles", "[cli][bad-input][hostile-files]") {
  expect_refused("compile --profiles FILE --slo-ms 100 --workers 2 --load-qps 50 --device cpu --out " +
                 lull::test::temp_dir() + "/never.pb");
  CHECK_FALSE(fs::exists(lull::test::temp_dir() + "/never.pb"));
}

TEST_CASE("hostile files: policy show", "[cli][bad-input][hostile-files]") { expect_refused("policy show FILE"); }

TEST_CASE("hostile files: serve --policies and --config", "[cli][bad-input][hostile-files]") {
  expect_refused("serve --policies FILE --servers http://127.0.0.1:1 --listen 127.0.0.1:0");
  expect_refused("serve --config FILE --policies " + tiny_policy() +
                 " --servers http://127.0.0.1:1 --listen 127.0.0.1:0");
  // A --config that cannot be read stops serve; it never starts without it.
  const auto r = lull::test::run_cli("timeout -s KILL 60 " + std::string(LULL_BINARY) + " serve --config " +
                                     lull::test::temp_dir() + "/absent.conf --policies " + tiny_policy() +
                                     " --servers http://127.0.0.1:1 --listen 127.0.0.1:0 </dev/null");
  INFO(r.output);
  CHECK(r.code == 2);
  CHECK(lull::test::count_lines(r.output) == 1);
  CHECK(r.output.find("absent.conf: cannot open: No such file or directory") != std::string::npos);
}

TEST_CASE("hostile files: loadgen --body-file", "[cli][bad-input][hostile-files]") {
  expect_refused("loadgen --target http://127.0.0.1:1/predictions/image --rate 1 --duration 1s --body-file FILE");
}
