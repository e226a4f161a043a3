#pragma once
// Setting up lull's log (log.h) for a command: its name on every line, the
// level, plain or JSON lines, and the access log's destination.
#include <string>

#include "runtime/log/log.h"

namespace lull::log {

enum class Format { kPlain, kJson };

struct Settings {
  Level level = Level::kInfo;
  Format format = Format::kPlain;
  std::string access_log;  // "" none, "-" standard output, else a file (appended to)
};

// "trace", "debug", "info", "warn" (or "warning", as lines say it), "error", "off"; throws std::invalid_argument
// otherwise.
Level parse_level(const std::string& text);
// "plain", "json"; throws std::invalid_argument otherwise.
Format parse_format(const std::string& text);

// Every line names the program: "lull serve" (cli/main.cc sets it per command).
void set_name(const std::string& name);
// Applies `settings`; throws std::invalid_argument naming the access log's
// path when it cannot be opened (nothing is changed then).
void configure(const Settings& settings);
// Writes out what the access log buffers (it flushes every second on its own).
void flush();

}  // namespace lull::log
