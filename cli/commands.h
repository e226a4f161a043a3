#pragma once
// The lull CLI is a thin main over a table of subcommands (cli/command_table.cc).
// Each subcommand parses its own options and throws on error; main turns
// errors into one line on stderr and an exit code.
#include <stdexcept>
#include <string>

namespace lull::cli {

// Bad usage or bad input: one line on stderr, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using CommandFn = int (*)(int argc, char** argv);  // argv[0] is the subcommand name

struct Command {
  const char* name;     // "compile", or two words: "policy show"
  const char* summary;  // one line for `lull --help`
  CommandFn run;
};

// The table; ends with {nullptr, nullptr, nullptr}.
extern const Command kCommands[];

}  // namespace lull::cli
