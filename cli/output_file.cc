#include "cli/output_file.h"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "cli/commands.h"
#include "schema/atomic_file.h"

namespace lull::cli {

bool is_stdout(const std::string& path) { return path == "-"; }

void write_output(const std::string& path, const std::string& text) {
  if (!is_stdout(path)) return write_file_atomically(path, text);
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
    throw std::runtime_error("-: cannot write to standard output");
}

void check_binary_output(const std::string& path, const std::string& flag) {
  if (is_stdout(path) && isatty(STDOUT_FILENO))
    throw UsageError(flag + " -: refusing to write a binary policy set to a terminal (redirect stdout or name a file)");
}

void write_binary_output(const std::string& path, const std::string& bytes, const std::string& flag) {
  check_binary_output(path, flag);
  write_output(path, bytes);
}

}  // namespace lull::cli
