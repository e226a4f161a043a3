#pragma once
// Writes a whole file or nothing: data goes to a temporary file beside the
// target, is flushed, and is renamed over it. A crash or error never leaves a
// half-written policy or report behind. A device or pipe (/dev/null) is
// written in place, never replaced.
#include <string>

namespace lull {

// Throws std::runtime_error("PATH: why") on failure; the target is untouched.
void write_file_atomically(const std::string& path, const std::string& bytes);

// Reads a whole regular file of at most 1 GiB (tests and tools; lull's own
// readers name their kind of file: schema/bounded_file.h). Throws
// std::runtime_error("PATH: why") on failure.
std::string read_whole_file(const std::string& path);

}  // namespace lull
