#pragma once
// Where every output flag of lull writes (--out, --report, --json,
// --timeline, --grid-out, ...): a path, written atomically, or '-' for
// standard output. One place, so '-' means stdout for every flag.
#include <string>

namespace lull::cli {

// True for '-': the output goes to stdout. A command whose output is stdout
// moves its own summary lines to stderr so the two do not mix.
bool is_stdout(const std::string& path);

// Text output: '-' writes to stdout, anything else atomically to the file.
void write_output(const std::string& path, const std::string& text);

// Binary output (a policy set): as write_output, but '-' on a terminal is
// refused with a UsageError naming `flag` (redirect it or name a file).
// check_binary_output refuses it up front, before the work that makes it.
void check_binary_output(const std::string& path, const std::string& flag);
void write_binary_output(const std::string& path, const std::string& bytes, const std::string& flag);

}  // namespace lull::cli
