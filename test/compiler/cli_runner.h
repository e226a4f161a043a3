#pragma once
// Runs the lull binary for CLI tests and captures its exit code and stderr.
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

inline CliResult run_lull(const std::string& args) {
  static int counter = 0;
  const std::string base = temp_dir() + "/run" + std::to_string(++counter);
  const std::string cmd = std::string(LULL_BINARY) + " " + args + " >" + base + ".out 2>" + base + ".err </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace lull::test
