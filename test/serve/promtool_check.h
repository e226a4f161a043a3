#pragma once
// `promtool check metrics` on a /metrics text, for the tests that lint it.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

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

}  // namespace lull::serve::testing
