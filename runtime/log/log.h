#pragma once
// lull's log: one line per event with a UTC timestamp and a level, plain
// ("2026-11-25T22:10:00.123Z info lull serve: worker 0 (...) up") or JSON
// lines, and the access log (one line per HTTP response). Every layer of the
// runtime may call it: it is a leaf like schema/ (it includes nothing of
// lull), and spdlog stays inside log.cc, so no header here names it.
// Configured once by the command (log_settings.h); until then lines go to
// stderr, plain, at info. The printf-style calls format only when their
// level is on, so a debug line on a hot path costs one atomic load at info.
#include <cstdint>
#include <string>

namespace lull::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

bool enabled(Level level);
void write(Level level, const std::string& message);

void trace(const char* format, ...) __attribute__((format(printf, 1, 2)));
void debug(const char* format, ...) __attribute__((format(printf, 1, 2)));
void info(const char* format, ...) __attribute__((format(printf, 1, 2)));
void warn(const char* format, ...) __attribute__((format(printf, 1, 2)));
void error(const char* format, ...) __attribute__((format(printf, 1, 2)));

// One HTTP response, for the access log (docs/user-guide.md, `lull serve`).
struct AccessRecord {
  std::string client;  // the peer's address, "-" when unknown
  std::string method;  // "-" when the request line was not read (a refusal before it)
  std::string path;    // the target without its query string, "-" as above
  int status = 0;
  std::uint64_t bytes = 0;  // the response body
  double duration_ms = 0;   // request header complete (or refusal) to response written
};

// True when an access log is open; the server builds records only then.
bool access_enabled();
void access(const AccessRecord& record);

}  // namespace lull::log
