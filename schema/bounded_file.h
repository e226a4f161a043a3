#pragma once
// The one way lull reads a whole input file (policies, fleets, settings,
// profiles, caches, key files, request bodies): a regular file (a symlink to
// one is fine), at most a size set per kind of file, or a one-line error
// "PATH: why". A FIFO, a directory, /dev/zero or a socket is refused before
// anything is read: opening is non-blocking (a FIFO without a writer cannot
// hang the caller) and nothing is read past the kind's cap (/dev/zero could
// not grow the heap even if it got that far).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace lull {

// The kinds of file lull reads, each with its own cap (bounded_file.cc).
enum class FileKind {
  kPolicy,       // policy set, library or fleet policy (protobuf)
  kSettings,     // --config, the fleet servers file, a plan or variants manifest
  kProfile,      // a profile set, the RAMSIS artifact's JSON, a plan
  kTrace,        // an arrivals or rate file
  kCache,        // a compiler cache entry
  kKey,          // a key or token file
  kRequestBody,  // loadgen --body-file
};

// "PATH: why", one line.
struct FileReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The kind's cap in bytes, and its name for messages ("policy file").
std::size_t file_size_cap(FileKind kind);
const char* file_kind_name(FileKind kind);

// The whole file. Throws FileReadError.
std::string read_bounded_file(const std::string& path, FileKind kind);

// The same into a buffer the caller sizes: `buffer(n)` is called once with
// the file's size and returns where to put n bytes (simdjson's padded
// string, without a second copy). Throws FileReadError.
void read_bounded_file_into(const std::string& path, FileKind kind, const std::function<char*(std::size_t)>& buffer);

}  // namespace lull
