#pragma once
// Parsing a subcommand's options the same way everywhere: `-h`/`--help`
// (added here, so no command declares it) prints the usage line, the
// examples and the options; a flag that was renamed gets a one-line error naming its new
// spelling; any parse error becomes a UsageError (one line, exit code 2).
#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace lull::cli {

// An old spelling that now means something else (or nothing) in a command:
// `--workers URL,...` in serve is `--servers`. `message` is the whole error.
struct RenamedFlag {
  std::string old_flag;  // "--workers"
  std::string message;   // "--workers is a count in lull; the model servers' URLs are --servers URL,URL"
};

struct ParseExtras {
  const boost::program_options::positional_options_description* positional = nullptr;
  std::vector<RenamedFlag> renamed;
  boost::program_options::variables_map* vm = nullptr;  // filled, for commands that check presence themselves
  // Settings also from the environment and a file (long-running commands:
  // `lull serve`). Non-empty: each option NAME is read from the environment
  // variable PREFIX + NAME in upper case with '-' as '_' (LULL_SERVE_MAX_BODY_BYTES),
  // and `--config FILE` (INI lines `name = value`, the long flag names) is
  // added. The command line wins over the environment, which wins over the file.
  std::string env_prefix{};
  // Shown under "Examples:" after the usage lines in --help: commands that
  // run as written from the repository root (ctest cli.help_examples runs them).
  const char* examples = nullptr;
};

// Returns false after printing help (the command should then exit 0).
// Throws std::logic_error, before parsing, when the command declares an
// unsigned option without ranged_value (cli/option_ranges.h).
bool parse_command_line(int argc, char** argv, const boost::program_options::options_description& desc,
                        const char* usage, const ParseExtras& extras = {});

// For tests: called with every command's options (help included) before
// they are parsed; tests/cli walks each command's unsigned flags with it.
// Whether argv names `flag` ("--fleet" or "--fleet=..."): a command whose
// flags differ with it (compile --fleet, plan --fleet) picks its parser first.
bool names_flag(int argc, char** argv, const std::string& flag);

using OptionsObserver = void (*)(const boost::program_options::options_description& options);
void set_options_observer(OptionsObserver observer);

}  // namespace lull::cli
