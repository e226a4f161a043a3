#pragma once
// Shared by the libFuzzer targets (test/fuzz, docs/testing.md). lull's readers
// take paths, so a target writes its input to a private scratch folder first;
// and every reader promises a one-line error naming its file, so a target
// checks that promise on each refusal: a refusal that breaks it, like any
// other exception type, is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include <algorithm>

namespace lull::fuzz {

// A folder of this process's own (libFuzzer's -jobs/-fork run several).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("lull-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes `bytes` to scratch_dir()/name and returns the path.
inline std::string write_scratch(const std::string& name, const std::string& bytes) {
  const auto path = scratch_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path.string();
}

// Reports a broken promise and aborts, so libFuzzer records the input.
[[noreturn]] inline void finding(const char* what) {
  std::fprintf(stderr, "lull fuzz finding: %s\n", what);
  std::abort();
}

// A refusal must be one non-empty line that names `path`; abort otherwise so
// libFuzzer records the input.
inline void check_error_names(const std::string& message, const std::string& path) {
  if (message.empty() || message.find('\n') != std::string::npos || message.find(path) == std::string::npos) {
    std::fprintf(stderr, "lull fuzz finding: error message does not name %s in one line: %s\n", path.c_str(),
                 message.c_str());
    std::abort();
  }
}

// Splits an input into `n` parts at the separator line "\n--8<--\n" (the
// missing parts are empty), so one fuzz input can describe several files.
inline std::vector<std::string> split_parts(const std::uint8_t* data, size_t size, size_t n) {
  static const std::string sep = "\n--8<--\n";
  const std::string all(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  size_t at = 0;
  while (parts.size() + 1 < n) {
    const auto next = all.find(sep, at);
    if (next == std::string::npos) break;
    parts.push_back(all.substr(at, next - at));
    at = next + sep.size();
  }
  parts.push_back(all.substr(std::min(at, all.size())));
  parts.resize(n);
  return parts;
}

}  // namespace lull::fuzz
