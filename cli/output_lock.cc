#include "cli/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/commands.h"
#include "cli/output_file.h"

namespace lull::cli {

OutputLock::OutputLock(const std::string& path, const std::string& flag) {
  if (is_stdout(path)) return;
  const std::string lock = path + ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw UsageError(flag + " " + path + ": cannot open its lock file " + lock + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  const int err = errno;
  ::close(fd_);
  fd_ = -1;
  if (err == EWOULDBLOCK)
    throw UsageError(flag + " " + path + ": another lull process writes it (" + lock +
                     " is locked); give each process its own file");
  throw UsageError(flag + " " + path + ": cannot lock " + lock + ": " + std::strerror(err));
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace lull::cli
