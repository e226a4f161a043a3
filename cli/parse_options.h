#pragma once
// Parsing a subcommand's options the same way everywhere: --help prints the
// usage line and the options; any parse error becomes a UsageError (one line,
// exit code 2).
#include <boost/program_options.hpp>

namespace lull::cli {

// Returns false after printing help (the command should then exit 0).
bool parse_command_line(int argc, char** argv, const boost::program_options::options_description& desc,
                        const char* usage,
                        const boost::program_options::positional_options_description* positional = nullptr);

}  // namespace lull::cli
