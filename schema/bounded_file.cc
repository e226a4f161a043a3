#include "schema/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "schema/one_line.h"

namespace lull {
namespace {

// A file descriptor closed on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string what_it_is(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::size_t file_size_cap(FileKind kind) {
  switch (kind) {
    case FileKind::kPolicy:
      return std::size_t{1} << 30;  // protobuf parses at most 2 GiB; the largest library seen is tens of MiB
    case FileKind::kSettings:
      return std::size_t{16} << 20;
    case FileKind::kProfile:
      return std::size_t{1} << 30;  // the RAMSIS artifact is 35 MiB in all
    case FileKind::kTrace:
      return std::size_t{1} << 30;
    case FileKind::kCache:
      return std::size_t{64} << 20;
    case FileKind::kKey:
      return std::size_t{1} << 20;
    case FileKind::kRequestBody:
      return std::size_t{64} << 20;  // schema/input_limits.h's kMaxInputBytes
  }
  return 0;
}

const char* file_kind_name(FileKind kind) {
  switch (kind) {
    case FileKind::kPolicy:
      return "policy file";
    case FileKind::kSettings:
      return "settings file";
    case FileKind::kProfile:
      return "profile file";
    case FileKind::kTrace:
      return "trace file";
    case FileKind::kCache:
      return "cache entry";
    case FileKind::kKey:
      return "key file";
    case FileKind::kRequestBody:
      return "request body file";
  }
  return "file";
}

void read_bounded_file_into(const std::string& path, FileKind kind, const std::function<char*(std::size_t)>& buffer) {
  const std::string at = one_line(path);
  auto fail = [&](const std::string& why) { throw FileReadError(at + ": " + why); };
  if (path.empty()) throw FileReadError("an empty path names no file");
  if (path.find('\0') != std::string::npos) fail("the path holds a NUL byte");
  Fd f;
  // O_NONBLOCK: opening a FIFO for reading does not wait for a writer.
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (f.fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(std::string("cannot read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    fail(what_it_is(st.st_mode) + ", not a regular file (a " + file_kind_name(kind) + " must be one)");
  const std::size_t cap = file_size_cap(kind);
  if (st.st_size < 0 || static_cast<std::uint64_t>(st.st_size) > cap)
    fail(std::to_string(st.st_size) + " bytes, more than a " + file_kind_name(kind) + " may hold (" + size_text(cap) +
         ")");
  const auto size = static_cast<std::size_t>(st.st_size);
  char* out = buffer(size);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(f.fd, out + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("read failed: ") + std::strerror(errno));
    if (n == 0) fail("the file shrank while it was read");
    got += static_cast<std::size_t>(n);
  }
  char extra = 0;
  for (;;) {
    const ssize_t n = ::read(f.fd, &extra, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("read failed: ") + std::strerror(errno));
    if (n > 0) fail("the file grew while it was read");
    break;
  }
}

std::string read_bounded_file(const std::string& path, FileKind kind) {
  std::string text;
  read_bounded_file_into(path, kind, [&](std::size_t n) {
    text.resize(n);
    return text.data();
  });
  return text;
}

}  // namespace lull
