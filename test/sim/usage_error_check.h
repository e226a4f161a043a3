#pragma once
// One check for the CLI tests' bad-input cases: the command fails as the
// project's rules say bad input must (exit code 2, one line on stderr naming
// the flag or field, no result file written). Header-only: it needs
// LULL_BINARY, which only the test binaries that run lull define.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "test/support/cli_runner.h"

namespace lull::test {

inline void check_usage_error(const std::string& args, const std::string& needle, const std::string& out) {
  std::filesystem::remove(out);
  const CliResult r = run_lull(args);
  INFO(args << ": " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.find(needle) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

}  // namespace lull::test
