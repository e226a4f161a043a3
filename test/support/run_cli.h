#pragma once
// Test helper: runs a command line (the lull executable and its arguments)
// through the shell and returns its exit code and output, stdout and stderr
// together, for CLI tests that check messages and exit codes.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace lull::test {

struct CliOutcome {
  int code = -1;
  std::string output;  // stdout and stderr together
};

inline CliOutcome run_cli(const std::string& command_line) {
  const std::string cmd = command_line + " 2>&1";
  CliOutcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) o.output.append(buf.data(), n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace lull::test
