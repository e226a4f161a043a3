#pragma once
// A cache of a RAMSIS artifact folder's reduced latencies, so that a compile
// does not parse tens of MB of JSON samples every time (the golden
// case spent a third of its time there). Per profile file it keeps the
// samples' percentile (the one number reduction takes from them) and their
// largest value (what validation checks against the SLO), bit for bit.
//
// An entry is valid only while every file it was read from has the same
// size, inode, mtime and ctime (ctime cannot be set back, so any write to a
// file changes its stamp) and the folder lists the same files; anything else
// is a miss and the files are read again. Files changed in the two
// seconds before `now_ns` (CLOCK_REALTIME, the files' clock; 0: read it)
// are not cached (their stamps could repeat within the file system's clock
// tick). One file per (folder, models, percentile), written atomically and
// ending in a checksum of its content: an entry edited into other
// well-formed numbers is a miss. A cache that cannot be read or written (a
// FIFO, a device, a directory in its place) is silently skipped.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schema/artifact_reader.h"
#include "schema/profile.pb.h"

namespace lull::compiler {

// $XDG_CACHE_HOME/lull, else $HOME/.cache/lull, else "" (no cache).
std::string default_profile_cache_dir();

struct ReducedSamples {
  double at_percentile_s = 0;  // percentile_linear of the samples
  double max_s = 0;            // the largest sample
};

struct ReducedArtifactModel {
  std::string name;
  std::map<int, ReducedSamples> by_batch;
};

class ArtifactReductionCache {
 public:
  // Lists and stats the files read_artifact_profiles(dir, only) would read.
  // An empty cache_dir disables the cache (load misses, store does nothing).
  ArtifactReductionCache(const std::string& cache_dir, const std::string& dir, const std::vector<std::string>& only,
                         double percentile, std::int64_t now_ns = 0);

  // The stored reduction, when every listed file is as it was stored.
  std::optional<std::vector<ReducedArtifactModel>> load() const;
  // Reduces the samples of `read` (imported from this folder after
  // construction) and stores them, unless a file changed too recently.
  void store(const schema::ProfileSet& read) const;

  // The cache file ("" when disabled).
  const std::string& path() const { return path_; }

 private:
  double percentile_;
  std::string path_, header_;
  std::vector<std::string> stamps_;  // one line per file: model, batch, size, inode, mtime, ctime
  bool fresh_ = false;               // some file changed in the two seconds before now
};

}  // namespace lull::compiler
