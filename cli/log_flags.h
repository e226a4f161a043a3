#pragma once
// The log's command-line options of the long-running commands (`lull serve`):
// --log-level, --log-format and --access-log (runtime/log/log_settings.h).
// Like every flag of serve they also come from --config and LULL_SERVE_*.
#include <boost/program_options.hpp>
#include <string>

namespace lull::cli {

struct LogFlags {
  std::string level = "info";
  std::string format = "plain";
  std::string access_log;  // "" none, "-" stdout
};

void add_log_options(boost::program_options::options_description& desc, LogFlags& flags);
// Configures the log; a bad level, format or access log path is a UsageError naming its flag.
void apply_log_flags(const LogFlags& flags);

}  // namespace lull::cli
