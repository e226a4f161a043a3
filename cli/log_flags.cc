#include "cli/log_flags.h"

#include <stdexcept>

#include "cli/commands.h"
#include "runtime/log/log_settings.h"

namespace lull::cli {

namespace po = boost::program_options;

void add_log_options(po::options_description& desc, LogFlags& flags) {
  // clang-format off
  desc.add_options()
      ("log-level", po::value(&flags.level)->default_value(flags.level),
       "trace, debug, info, warn, error or off: the least severe line logged (debug: a line per batch)")
      ("log-format", po::value(&flags.format)->default_value(flags.format),
       "plain (TIME LEVEL lull serve: MESSAGE, for journald and people) or json (one object per line, for log shippers)")
      ("access-log", po::value(&flags.access_log),
       "a line per HTTP response (TIME CLIENT METHOD PATH STATUS BYTES DURATION_MS; an object with --log-format "
       "json) appended to this file, or '-' for stdout");
  // clang-format on
}

void apply_log_flags(const LogFlags& flags) {
  log::Settings s;
  try {
    s.level = log::parse_level(flags.level);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--log-level: ") + e.what());
  }
  try {
    s.format = log::parse_format(flags.format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--log-format: ") + e.what());
  }
  s.access_log = flags.access_log;
  try {
    log::configure(s);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());  // names --access-log
  }
}

}  // namespace lull::cli
