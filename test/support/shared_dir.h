#pragma once
// Where the ../shared data (spec, golden numbers, RAMSIS artifact) lives:
// $LULL_SHARED_DIR when set, else the folder beside the checkout that the
// build names (LULL_SHARED_DIR). A test needing it skips when it is absent,
// unless LULL_REQUIRE_SHARED=1 (CI, .ci/run), where absence fails the test.
#include <cstdlib>
#include <string>

#include "test/support/skip.h"

namespace lull::test {

inline std::string shared_dir() {
  const char* dir = std::getenv("LULL_SHARED_DIR");
  return dir && *dir ? dir : LULL_SHARED_DIR;
}

inline bool shared_required() {
  const char* v = std::getenv("LULL_REQUIRE_SHARED");
  return v && std::string(v) == "1";
}

}  // namespace lull::test

// Leaves the test case when `present` is false: skipped, or failed under
// LULL_REQUIRE_SHARED=1. `what` names the missing data.
#define LULL_REQUIRE_SHARED_DATA(present, what)                                                      \
  do {                                                                                               \
    if (!(present)) {                                                                                \
      if (lull::test::shared_required())                                                             \
        FAIL(what << " not found under " << lull::test::shared_dir() << " (LULL_REQUIRE_SHARED=1)"); \
      LULL_SKIP(what << " not found under " << lull::test::shared_dir());                            \
    }                                                                                                \
  } while (0)
