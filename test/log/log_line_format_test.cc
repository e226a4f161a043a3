// The text of lull's log lines (runtime/log/line_format.h): the timestamp,
// JSON strings that stay valid whatever a message holds, the access line.
#include <catch2/catch.hpp>

#include <chrono>

#include "runtime/log/line_format.h"
#include "runtime/log/log_settings.h"

namespace {

std::chrono::system_clock::time_point at_ms(std::int64_t ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

}  // namespace

TEST_CASE("log line: UTC timestamp to the millisecond", "[log]") {
  CHECK(lull::log::utc_timestamp(at_ms(0)) == "1970-01-01T00:00:00.000Z");
  CHECK(lull::log::utc_timestamp(at_ms(1795731475007)) == "2026-11-26T22:17:55.007Z");
}

TEST_CASE("log line: a JSON string escapes quotes, backslashes and control characters", "[log]") {
  CHECK(lull::log::json_string("plain") == "\"plain\"");
  CHECK(lull::log::json_string("a \"quoted\" C:\\path") == "\"a \\\"quoted\\\" C:\\\\path\"");
  CHECK(lull::log::json_string("two\nlines\tand\x01") == "\"two\\nlines\\tand\\u0001\"");
}

TEST_CASE("log line: the access line, plain and JSON", "[log]") {
  lull::log::AccessRecord r;
  r.client = "127.0.0.1";
  r.method = "POST";
  r.path = "/predictions/image";
  r.status = 200;
  r.bytes = 25;
  r.duration_ms = 40.9124;
  CHECK(lull::log::access_line(r, at_ms(0), false) ==
        "1970-01-01T00:00:00.000Z 127.0.0.1 POST /predictions/image 200 25 40.912");
  CHECK(lull::log::access_line(r, at_ms(0), true) ==
        "{\"time\":\"1970-01-01T00:00:00.000Z\",\"client\":\"127.0.0.1\",\"method\":\"POST\","
        "\"path\":\"/predictions/image\",\"status\":200,\"bytes\":25,\"duration_ms\":40.912}");
  // A refusal before the request line: no method or path; a control character cannot split the line.
  lull::log::AccessRecord refused;
  refused.status = 400;
  refused.path = "/a\nb";
  CHECK(lull::log::access_line(refused, at_ms(0), false) == "1970-01-01T00:00:00.000Z - - /a\\nb 400 0 0.000");
}

TEST_CASE("log settings: levels and formats by name, anything else refused", "[log]") {
  CHECK(lull::log::parse_level("debug") == lull::log::Level::kDebug);
  CHECK(lull::log::parse_level("off") == lull::log::Level::kOff);
  CHECK(lull::log::parse_level("warning") == lull::log::Level::kWarn);  // as the lines spell it
  CHECK_THROWS_WITH(lull::log::parse_level("loud"), Catch::Contains("not a log level"));
  CHECK(lull::log::parse_format("json") == lull::log::Format::kJson);
  CHECK_THROWS_WITH(lull::log::parse_format("xml"), Catch::Contains("not a log format"));
}
