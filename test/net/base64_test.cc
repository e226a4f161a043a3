#include <catch2/catch.hpp>

#include "runtime/net/base64.h"

using namespace lull::net;

TEST_CASE("base64 matches RFC 4648 vectors and round-trips binary", "[serve][base64]") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  CHECK(base64_decode(base64_encode(all)).value() == all);
  CHECK(base64_decode("Zm8=").value() == "fo");
}

TEST_CASE("base64 refuses malformed text", "[serve][base64]") {
  CHECK_FALSE(base64_decode("Zm8").has_value());   // not a multiple of 4
  CHECK_FALSE(base64_decode("Zm!v").has_value());  // bad character
  CHECK_FALSE(base64_decode("Z=8v").has_value());  // padding in the middle
  CHECK_FALSE(base64_decode("Zg==Zg==").has_value());
}
