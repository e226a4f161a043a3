#pragma once
// `promtool check metrics` on a /metrics text, for the tests that lint it.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "test/support/skip.h"

namespace lull::serve::testing {

// Runs `promtool check metrics` (Debian's prometheus package) on the text;
// returns its exit status and output, or -1 when promtool is not installed.
inline int promtool_check(const std::string& metrics, std::string* output) {
  if (std::string(LULL_PROMTOOL).empty()) return -1;
  char path[] = "/tmp/lull-metrics-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << metrics;
  FILE* p = popen((std::string(LULL_PROMTOOL) + " check metrics < " + path + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) output->append(buf, n);
  const int status = pclose(p);
  std::remove(path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

inline bool promtool_installed() { return !std::string(LULL_PROMTOOL).empty(); }

// LULL_REQUIRE_TOOLS=1 (CI): a missing test tool is a failure, not a skip.
inline bool tools_required() {
  const char* v = std::getenv("LULL_REQUIRE_TOOLS");
  return v != nullptr && std::string(v) == "1";
}

// Lints `metrics` inside a test case that checks more than the lint: without
// promtool it says so (a failure under LULL_REQUIRE_TOOLS=1); the test cases
// that lint alone skip instead (LULL_SKIP_WITHOUT_PROMTOOL).
inline void check_with_promtool(const std::string& metrics) {
  if (!promtool_installed()) {
    if (tools_required()) FAIL_CHECK("promtool not installed (LULL_REQUIRE_TOOLS=1)");
    WARN("promtool not installed (Debian package prometheus): lint left to the promtool test cases");
    return;
  }
  std::string lint;
  const int rc = promtool_check(metrics, &lint);
  INFO(lint);
  CHECK(rc == 0);
  CHECK(lint.empty());
}

}  // namespace lull::serve::testing

// Leaves a lint-only test case as Skipped (ctest: exit 77) without promtool,
// and fails it under LULL_REQUIRE_TOOLS=1.
#define LULL_SKIP_WITHOUT_PROMTOOL()                                                                     \
  do {                                                                                                   \
    if (!lull::serve::testing::promtool_installed()) {                                                   \
      if (lull::serve::testing::tools_required()) FAIL("promtool not installed (LULL_REQUIRE_TOOLS=1)"); \
      LULL_SKIP("promtool not installed (Debian package prometheus; .ci/install-deps installs it)");     \
    }                                                                                                    \
  } while (0)
