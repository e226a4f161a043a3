// The main of every Catch2 test binary: Catch's own, except that a test case
// that skipped (test/support/skip.h) makes the process exit with the skip code.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "test/support/skip.h"

int main(int argc, char* argv[]) { return lull::test::exit_code_after(Catch::Session().run(argc, argv)); }
