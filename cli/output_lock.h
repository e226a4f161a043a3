#pragma once
// One writer per output file across processes: an exclusive flock on the
// sibling PATH.lock, held while the OutputLock lives. Two lull processes
// (shards on one host, say) given the same file that each rewrites while it
// runs (--recompile-on-drift) would overwrite one another's; the second is
// refused at start-up instead. The lock file is left in place: removing it
// on exit would let a third process lock a new file while the second still
// holds the old one. '-' (standard output) takes no lock.
#include <string>

namespace lull::cli {

class OutputLock {
 public:
  // Throws UsageError naming `flag` and the file when another process (or
  // another OutputLock) holds it, or when the lock file cannot be opened.
  OutputLock(const std::string& path, const std::string& flag);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace lull::cli
