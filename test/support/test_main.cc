// The main of every Catch2 test binary: Catch's own, except that a test case
// that skipped (test/support/skip.h) makes the process exit with the skip code,
// and the lull processes tests start keep their profile cache in this
// process's own folder, not the user's (XDG_CACHE_HOME, docs/user-guide.md).
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "test/support/skip.h"

int main(int argc, char* argv[]) {
  const std::string cache =
      (std::filesystem::temp_directory_path() / ("lull_test_cache_" + std::to_string(::getpid()))).string();
  ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  const int result = lull::test::exit_code_after(Catch::Session().run(argc, argv));
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
  return result;
}
