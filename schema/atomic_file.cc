#include "schema/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "schema/bounded_file.h"

namespace lull {

void write_file_atomically(const std::string& path, const std::string& bytes) {
  // A device or pipe (--out /dev/null, /dev/stdout) is written in place: a
  // rename would replace the device itself with a regular file.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const int err = errno;
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error(path + ": write failed: " + std::strerror(err));
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot create temporary file: " + std::strerror(errno));
  const bool ok =
      std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": write failed: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rerr = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename temporary file into place: " + std::strerror(rerr));
  }
}

std::string read_whole_file(const std::string& path) { return read_bounded_file(path, FileKind::kProfile); }

}  // namespace lull
