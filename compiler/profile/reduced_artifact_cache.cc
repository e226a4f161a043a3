#include "compiler/profile/reduced_artifact_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "compiler/profile/latency_reduction.h"
#include "schema/atomic_file.h"
#include "schema/bounded_file.h"
#include "schema/checksum.h"

namespace lull::compiler {
namespace {

// Bump when the file format or what the numbers mean (percentile_linear) changes.
constexpr const char* kFormat = "lull artifact reduction cache 2";  // 2: a checksum line ends the entry
constexpr long long kRacySeconds = 2;

long long ns_of(const timespec& t) { return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec; }

bool plain(const std::string& s) { return s.find_first_of("\t\n\r") == std::string::npos; }

// The entry's last line: "checksum <FNV-1a 64 of every byte before it>", so
// an entry edited by hand (still well-formed) is a miss, not other numbers.
std::string checksum_line(const std::string& text) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "checksum %016llx\n", static_cast<unsigned long long>(fnv1a64(text)));
  return buf;
}

// The entry without its checksum line, if that line matches; else nullopt.
std::optional<std::string> verified_body(const std::string& text) {
  if (text.empty() || text.back() != '\n') return std::nullopt;
  const std::size_t start = text.rfind('\n', text.size() - 2);
  if (start == std::string::npos) return std::nullopt;
  std::string body = text.substr(0, start + 1);
  if (text.compare(start + 1, std::string::npos, checksum_line(body)) != 0) return std::nullopt;
  return body;
}

// %a round-trips a double exactly.
std::string hex(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

}  // namespace

std::string default_profile_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/lull";
  const char* home = std::getenv("HOME");
  if (home && *home == '/') return std::string(home) + "/.cache/lull";
  return "";
}

ArtifactReductionCache::ArtifactReductionCache(const std::string& cache_dir, const std::string& dir,
                                               const std::vector<std::string>& only, double percentile,
                                               std::int64_t now_ns)
    : percentile_(percentile) {
  if (cache_dir.empty()) return;
  std::error_code ec;
  const std::string folder = std::filesystem::canonical(dir, ec).string();
  if (ec || !plain(folder)) return;
  std::vector<std::string> models = only;
  std::sort(models.begin(), models.end());
  std::string named;
  for (const auto& m : models) named += m + ",";
  if (!plain(named)) return;
  header_ = std::string(kFormat) + "\n" + folder + "\n" + named + "\n" + hex(percentile) + "\n";
  if (now_ns == 0) {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    now_ns = ns_of(now);
  }
  for (const auto& f : list_artifact_files(dir, only)) {
    struct stat st {};
    if (!plain(f.model) || ::stat(f.path.c_str(), &st) != 0) return;
    fresh_ |= ns_of(st.st_ctim) > now_ns - kRacySeconds * 1000000000LL ||
              ns_of(st.st_mtim) > now_ns - kRacySeconds * 1000000000LL;
    stamps_.push_back(f.model + "\t" + std::to_string(f.batch) + "\t" + std::to_string(st.st_size) + "\t" +
                      std::to_string(st.st_ino) + "\t" + std::to_string(ns_of(st.st_mtim)) + "\t" +
                      std::to_string(ns_of(st.st_ctim)));
  }
  char name[40];
  std::snprintf(name, sizeof name, "artifact-%016llx.tsv",
                static_cast<unsigned long long>(fnv1a64(header_)));  // one entry per (folder, models, percentile)
  path_ = cache_dir + "/" + name;
}

std::optional<std::vector<ReducedArtifactModel>> ArtifactReductionCache::load() const {
  if (path_.empty() || stamps_.empty()) return std::nullopt;
  std::string text;
  try {
    text = read_bounded_file(path_, FileKind::kCache);  // a FIFO or /dev/zero entry is a miss, at once
  } catch (const std::exception&) {
    return std::nullopt;
  }
  auto body = verified_body(text);
  if (!body) return std::nullopt;
  text = std::move(*body);
  if (text.compare(0, header_.size(), header_) != 0) return std::nullopt;
  std::istringstream in(text.substr(header_.size()));
  std::vector<ReducedArtifactModel> out;
  std::string line;
  for (const auto& stamp : stamps_) {
    // "<stamp>\t<percentile>\t<max>"
    if (!std::getline(in, line) || line.size() <= stamp.size() + 1 || line.compare(0, stamp.size(), stamp) != 0 ||
        line[stamp.size()] != '\t')
      return std::nullopt;
    const char* p = line.c_str() + stamp.size() + 1;
    char* end = nullptr;
    ReducedSamples r;
    r.at_percentile_s = std::strtod(p, &end);
    if (end == p || *end != '\t') return std::nullopt;
    p = end + 1;
    r.max_s = std::strtod(p, &end);
    if (end == p || *end != '\0' || !(r.at_percentile_s > 0 && r.max_s >= r.at_percentile_s)) return std::nullopt;
    const std::string model = stamp.substr(0, stamp.find('\t'));
    const int batch = std::atoi(stamp.c_str() + model.size() + 1);
    if (out.empty() || out.back().name != model) out.push_back(ReducedArtifactModel{model, {}});
    out.back().by_batch[batch] = r;
  }
  if (!std::getline(in, line) || line != "end") return std::nullopt;
  return out;
}

void ArtifactReductionCache::store(const schema::ProfileSet& read) const {
  if (path_.empty() || stamps_.empty() || fresh_) return;
  std::string text = header_;
  std::size_t i = 0;
  for (const auto& m : read.models())
    for (const auto& l : m.latencies()) {
      const std::vector<double> samples(l.samples_s().begin(), l.samples_s().end());
      if (samples.empty()) return;
      const std::string key = m.name() + "\t" + std::to_string(l.batch()) + "\t";
      if (i >= stamps_.size() || stamps_[i].compare(0, key.size(), key) != 0) return;
      text += stamps_[i++] + "\t" + hex(percentile_linear(samples, percentile_)) + "\t" +
              hex(*std::max_element(samples.begin(), samples.end())) + "\n";
    }
  if (i != stamps_.size()) return;  // the folder changed while it was read
  text += "end\n";
  text += checksum_line(text);
  // An entry that is not a regular file (a FIFO, a device) is never written
  // through: writing into a FIFO waits for a reader.
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;
  try {
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
    write_file_atomically(path_, text);
  } catch (const std::exception&) {
    // A cache that cannot be written costs only the next read.
  }
}

}  // namespace lull::compiler
