// `lull serve` reads its settings from three places (docs/user-guide.md,
// "Settings from a file and the environment"): the command line wins over
// LULL_SERVE_* variables, which win over `--config FILE`. Observed through the
// first check that fails: --http-threads 0 is refused before the policy file
// is opened, and a missing policy file is named.
#include <catch2/catch.hpp>
#include <fstream>

#include "test/support/cli_runner.h"

using lull::test::run_cli;
using lull::test::temp_dir;

namespace {

const std::string kMissing = "/nonexistent/lull-settings-test.pb";

std::string config_file(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// `lull serve ARGS` with ENV set (and every other LULL_SERVE_* cleared).
lull::test::CliOutcome serve(const std::string& env, const std::string& args) {
  return run_cli("env -u LULL_SERVE_HTTP_THREADS " + env + " " + LULL_BINARY + " serve " + args + " </dev/null");
}

bool names(const lull::test::CliOutcome& r, const std::string& what) {
  return r.output.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("serve settings: the command line over the environment over the file", "[cli][serve][settings]") {
  const auto conf = config_file("serve.conf", "# lull serve settings\npolicies = " + kMissing +
                                                  "\nservers = http://127.0.0.1:9\nhttp-threads = 0\n");
  const std::string with_file = "--config " + conf;
  SECTION("the file's values are used") {
    const auto r = serve("", with_file);
    CHECK(r.code == 2);
    CHECK(names(r, "--http-threads"));
  }
  SECTION("the environment overrides the file") {
    const auto r = serve("LULL_SERVE_HTTP_THREADS=2", with_file);
    CHECK(r.code == 2);
    CHECK_FALSE(names(r, "--http-threads"));
    CHECK(names(r, kMissing));  // the file's policies, the environment's thread count
  }
  SECTION("the command line overrides the environment") {
    const auto r = serve("LULL_SERVE_HTTP_THREADS=2", with_file + " --http-threads 0");
    CHECK(r.code == 2);
    CHECK(names(r, "--http-threads"));
  }
}

TEST_CASE("serve settings: unknown names are refused, naming the file or variable",
          "[cli][serve][settings][bad-input]") {
  SECTION("a file with a key that is no flag") {
    const auto conf = config_file("typo.conf", "policies = x.pb\nmax-body-byte = 5\n");
    const auto r = serve("", "--config " + conf);
    CHECK(r.code == 2);
    CHECK(names(r, conf));
    CHECK(names(r, "max-body-byte"));
    CHECK(lull::test::count_lines(r.output) == 1);
  }
  SECTION("a missing file") {
    const auto r = serve("", "--config /nonexistent/serve.conf");
    CHECK(r.code == 2);
    CHECK(names(r, "/nonexistent/serve.conf"));
  }
  SECTION("a LULL_SERVE_ variable that names no flag") {
    const auto r = serve("LULL_SERVE_MAX_BODY_BYTE=5", "--policies x.pb");
    CHECK(r.code == 2);
    CHECK(names(r, "LULL_SERVE_MAX_BODY_BYTE"));
  }
}
