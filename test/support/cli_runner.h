#pragma once
// Runs the lull binary (or any command line) for CLI tests and captures its
// exit code and output: run_lull keeps stdout and stderr apart, run_cli gives
// them together for checks that only look for a message.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace lull::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string temp_dir() {
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() / ("lull_test_" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The exit code of a wait status; -1 when the process did not exit (a signal).
inline int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

inline CliResult run_lull(const std::string& args) {
  static int counter = 0;
  const std::string base = temp_dir() + "/run" + std::to_string(++counter);
  const std::string cmd = std::string(LULL_BINARY) + " " + args + " >" + base + ".out 2>" + base + ".err </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = exit_code_of(status);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

struct CliOutcome {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a whole command line through the shell, stdout and stderr together.
inline CliOutcome run_cli(const std::string& command_line) {
  CliOutcome o;
  FILE* p = popen((command_line + " 2>&1").c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) o.output.append(buf.data(), n);
  o.code = exit_code_of(pclose(p));
  return o;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace lull::test
