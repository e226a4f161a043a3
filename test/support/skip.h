#pragma once
// A test case that cannot run here says so to CTest instead of passing:
// LULL_SKIP(why) prints why, counts the skip and leaves the test case, and
// test/support/test_main.cc then exits with kSkipExitCode, which every ctest
// entry declares as its SKIP_RETURN_CODE (test/CMakeLists.txt). Each ctest
// entry runs one test case, so the skip is reported for exactly that one.
#include <catch2/catch.hpp>

namespace lull::test {

inline constexpr int kSkipExitCode = 77;

inline int& skipped_test_cases() {
  static int n = 0;
  return n;
}

// The process's exit code: Catch's own when something failed, else the
// skip code when a test case skipped.
inline int exit_code_after(int catch_result) {
  if (catch_result != 0) return catch_result;
  return skipped_test_cases() > 0 ? kSkipExitCode : 0;
}

}  // namespace lull::test

#define LULL_SKIP(why)                  \
  do {                                  \
    WARN("SKIPPED: " << why);           \
    ++lull::test::skipped_test_cases(); \
    return;                             \
  } while (0)
