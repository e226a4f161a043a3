#include "runtime/log/line_format.h"

#include <cstdio>
#include <ctime>

#include "schema/one_line.h"

namespace lull::log {

std::string utc_timestamp(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

std::string json_string(std::string_view text) {
  std::string quoted;
  quoted.reserve(text.size() + 2);
  for (const char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return "\"" + one_line(quoted) + "\"";  // control characters as JSON escapes
}

std::string access_line(const AccessRecord& r, std::chrono::system_clock::time_point t, bool json) {
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.3f", r.duration_ms);
  const auto field = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  if (json)
    return "{\"time\":\"" + utc_timestamp(t) + "\",\"client\":" + json_string(field(r.client)) +
           ",\"method\":" + json_string(field(r.method)) + ",\"path\":" + json_string(field(r.path)) +
           ",\"status\":" + std::to_string(r.status) + ",\"bytes\":" + std::to_string(r.bytes) +
           ",\"duration_ms\":" + duration + "}";
  // A request target holds no spaces (HTTP's request line is split by them);
  // one_line keeps a stray control character from splitting the line.
  return utc_timestamp(t) + " " + one_line(field(r.client)) + " " + one_line(field(r.method)) + " " +
         one_line(field(r.path)) + " " + std::to_string(r.status) + " " + std::to_string(r.bytes) + " " + duration;
}

}  // namespace lull::log
