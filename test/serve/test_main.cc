// Catch2 v2 main for lull_serve_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
