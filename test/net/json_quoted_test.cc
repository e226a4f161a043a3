// JSON strings lull writes stay UTF-8 whatever bytes they quote
// (runtime/net/json_value.h): text that is not UTF-8 is read as Latin-1.
#include <catch2/catch.hpp>

#include "runtime/net/json_value.h"

using namespace lull::net;

TEST_CASE("json_quoted: UTF-8 as it is, other text as Latin-1, always valid JSON", "[net][json]") {
  CHECK(json_quoted("plain \"q\" \\ \n") == "\"plain \\\"q\\\" \\\\ \\u000a\"");
  CHECK(json_quoted("caf\xc3\xa9") == "\"caf\xc3\xa9\"");  // UTF-8 already: unchanged
  // A Latin-1 class name ("café" in ISO 8859-1) was echoed raw: invalid UTF-8 in the answer.
  const std::string quoted = json_quoted("caf\xe9 \xff\x80");
  CHECK(quoted == "\"caf\xc3\xa9 \xc3\xbf\xc2\x80\"");
  CHECK(is_utf8(quoted));
}
