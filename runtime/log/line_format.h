#pragma once
// The text of a log line, without spdlog: the UTC timestamp, a JSON string,
// and the access log's record in either format (docs/user-guide.md says the
// fields). log.cc hands these to spdlog's sinks.
#include <chrono>
#include <string>
#include <string_view>

#include "runtime/log/log.h"

namespace lull::log {

// "2026-11-25T22:10:00.123Z"
std::string utc_timestamp(std::chrono::system_clock::time_point t);
// `text` as a quoted JSON string (quotes, backslashes and control characters escaped).
std::string json_string(std::string_view text);
// Plain: "TIME CLIENT METHOD PATH STATUS BYTES DURATION_MS"; JSON: one object with those names.
std::string access_line(const AccessRecord& r, std::chrono::system_clock::time_point t, bool json);

}  // namespace lull::log
