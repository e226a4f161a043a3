// compiler/profile/reduced_artifact_cache: an artifact folder's reduced
// latencies come from the cache only while its files are unchanged, and a
// hit reduces to exactly the tables a full read gives.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "compiler/compile_inputs.h"
#include "compiler/profile/reduced_artifact_cache.h"
#include "schema/atomic_file.h"
#include "test/support/cli_runner.h"
#include "test/support/shared_data.h"

namespace fs = std::filesystem;
using lull::compiler::ArtifactReductionCache;

namespace {

struct Folder {
  std::string dir, acc, cache;
  std::int64_t aged_ns = 0;  // a "now" past the cache's two-second window for every file
};

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec; }

// The newest ctime or mtime of a file under `dir` (CLOCK_REALTIME ns).
std::int64_t newest_stamp_ns(const std::string& dir) {
  std::int64_t newest = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    REQUIRE(::stat(e.path().c_str(), &st) == 0);
    newest = std::max({newest, ns_of(st.st_ctim), ns_of(st.st_mtim)});
  }
  return newest;
}

// 2.1 s after the newest change under `dir`: the cache's "now" at which its
// files count as aged (no waiting: the cache takes its "now" from the spec).
std::int64_t aged_now_ns(const std::string& dir) { return newest_stamp_ns(dir) + 2100000000LL; }

// Two models, and a "now" at which their files are past the cache's
// two-second "changed just now" window, so that they are cached.
Folder make_aged_artifact(const std::string& name, const std::string& net_b_2 = "[0.025, 0.040]") {
  Folder f;
  f.dir = lull::test::temp_dir() + "/" + name;
  f.cache = lull::test::temp_dir() + "/" + name + "_cache";
  fs::remove_all(f.dir);
  fs::remove_all(f.cache);
  fs::create_directories(f.dir + "/net_a");
  fs::create_directories(f.dir + "/net_b");
  std::ofstream(f.dir + "/net_a/net_a_bsize-1_profile.json") << "[0.010, 0.012, 0.011, 0.013]";
  std::ofstream(f.dir + "/net_a/net_a_bsize-2_profile.json") << "[0.015, 0.016]";
  std::ofstream(f.dir + "/net_b/net_b_bsize-1_profile.json") << "[0.020, 0.021]";
  std::ofstream(f.dir + "/net_b/net_b_bsize-2_profile.json") << net_b_2;
  f.acc = lull::test::write_temp(name + "_acc.json", R"({"net_a": 70, "net_b": 80})");
  f.aged_ns = aged_now_ns(f.dir);
  return f;
}

lull::compiler::CompileSpec spec_for(const Folder& f, const std::string& cache_dir) {
  lull::compiler::CompileSpec spec;
  spec.inputs.path = f.dir;
  spec.inputs.accuracy_json = f.acc;
  spec.mdp.workers = 1;
  spec.mdp.slo_us = 150000;
  spec.loads_qps = {1};
  spec.reduction.keep_all_models = true;
  spec.profile_cache_dir = cache_dir;
  spec.profile_cache_now_ns = f.aged_ns;
  return spec;
}

std::vector<std::vector<double>> tables(const lull::compiler::CompileInputs& in) {
  std::vector<std::vector<double>> out;
  for (const auto& m : in.profiles.models) out.push_back(m.latency_us);
  return out;
}

bool cached(const Folder& f, const lull::compiler::CompileSpec& spec) {
  return ArtifactReductionCache(f.cache, f.dir, spec.reduction.models, spec.reduction.percentile).load().has_value();
}

}  // namespace

TEST_CASE("profile cache: a hit reduces to the same tables and any change to the files is a miss",
          "[compiler][cache]") {
  const Folder f = make_aged_artifact("cache_changes");
  auto spec = spec_for(f, f.cache);
  const auto uncached = tables(lull::compiler::load_compile_inputs(spec_for(f, "")));
  CHECK(!fs::exists(f.cache));  // no cache directory: nothing written

  CHECK(!cached(f, spec));
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == uncached);  // miss: read, then stored
  REQUIRE(cached(f, spec));
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == uncached);  // hit: bit for bit the same

  // Another percentile or model list is another entry.
  auto p99 = spec;
  p99.reduction.percentile = 99;
  CHECK(!cached(f, p99));
  auto named = spec;
  named.reduction.models = {"net_a"};
  CHECK(!cached(f, named));

  // A corrupt cache file is a miss, and is replaced.
  for (const auto& e : fs::directory_iterator(f.cache)) {
    std::string text = lull::read_whole_file(e.path().string());
    text[text.size() - 8] = 'z';
    std::ofstream(e.path()) << text;
  }
  CHECK(!cached(f, spec));
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == uncached);
  REQUIRE(cached(f, spec));

  // Same size, new content: judged at the change, it is read, not stored;
  // two seconds later it is stored (the window's bound, to the nanosecond).
  std::ofstream(f.dir + "/net_a/net_a_bsize-1_profile.json") << "[0.010, 0.012, 0.011, 0.014]";
  const std::int64_t change_ns = newest_stamp_ns(f.dir);
  spec.profile_cache_now_ns = change_ns;
  CHECK(!cached(f, spec));
  const auto changed = tables(lull::compiler::load_compile_inputs(spec));
  CHECK(changed != uncached);
  CHECK(changed == tables(lull::compiler::load_compile_inputs(spec_for(f, ""))));
  CHECK(!cached(f, spec));  // changed just now: not stored
  spec.profile_cache_now_ns = change_ns + 1999999999LL;
  lull::compiler::load_compile_inputs(spec);
  CHECK(!cached(f, spec));
  spec.profile_cache_now_ns = change_ns + 2000000000LL;
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == changed);
  REQUIRE(cached(f, spec));
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == changed);  // and a hit

  // A new batch size, and a file removed.
  std::ofstream(f.dir + "/net_b/net_b_bsize-3_profile.json") << "[0.05]";
  CHECK(!cached(f, spec));
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) ==
        tables(lull::compiler::load_compile_inputs(spec_for(f, ""))));
  fs::remove(f.dir + "/net_b/net_b_bsize-2_profile.json");
  CHECK(!cached(f, spec));
}

TEST_CASE("profile cache: a sample beyond the SLO's bound is still named when the reduction is cached",
          "[compiler][cache][bad-input]") {
  // p95 of 21 samples is the 20th smallest: 0.025 s, while the largest is 2 s.
  std::string samples = "[";
  for (int i = 0; i < 20; ++i) samples += "0.025, ";
  const Folder f = make_aged_artifact("cache_slo", samples + "2.0]");
  // A miss under a 1 s SLO (samples up to 1000 s) stores the reduction; under
  // a 1 ms SLO (up to 1 s) the 2 s sample must still be refused by name.
  auto spec = spec_for(f, f.cache);
  spec.mdp.slo_us = 1e6;
  lull::compiler::load_compile_inputs(spec);
  REQUIRE(cached(f, spec));
  spec.mdp.slo_us = 1000;
  CHECK_THROWS_WITH(lull::compiler::load_compile_inputs(spec), Catch::Contains("samples_s[20]"));
}

TEST_CASE("profile cache: the golden case's tables from the cache equal a full read", "[compiler][cache]") {
  LULL_REQUIRE_SHARED_DATA(lull::test::have_artifact(), "ramsis-artifact/ (image profiles and accuracies)");
  lull::compiler::CompileSpec spec;
  spec.inputs.path = lull::test::artifact_dir();
  spec.inputs.accuracy_json = lull::test::accuracy_json();
  spec.mdp.workers = 60;
  spec.mdp.slo_us = 150000;
  spec.loads_qps = {2000};
  spec.reduction.models = lull::test::golden_models();
  const auto full = tables(lull::compiler::load_compile_inputs(spec));
  spec.profile_cache_dir = lull::test::temp_dir() + "/golden_cache";
  fs::remove_all(spec.profile_cache_dir);
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == full);
  REQUIRE(ArtifactReductionCache(spec.profile_cache_dir, spec.inputs.path, spec.reduction.models, 95).load());
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == full);
}

// A cache entry that is a FIFO, /dev/zero or a directory is a miss at once:
// before the bounded reader, a FIFO entry hung lull compile (the read waited
// for a writer, and the store would have waited for a reader) and /dev/zero
// grew it to gigabytes. The entry is left as it is.
TEST_CASE("profile cache: a FIFO, /dev/zero or a directory as the entry is a miss, at once",
          "[compiler][cache][bad-input][hostile-files]") {
  const Folder f = make_aged_artifact("cache_hostile");
  const auto spec = spec_for(f, f.cache);
  const auto uncached = tables(lull::compiler::load_compile_inputs(spec_for(f, "")));
  const std::string entry =
      ArtifactReductionCache(f.cache, f.dir, spec.reduction.models, spec.reduction.percentile).path();
  REQUIRE(!entry.empty());
  fs::create_directories(f.cache);
  const std::string fifo = lull::test::temp_dir() + "/cache_hostile.fifo";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::vector<std::string> targets = {fifo, f.cache + "/a-folder"};
  fs::create_directories(targets.back());
  if (fs::exists("/dev/zero")) targets.push_back("/dev/zero");
  for (const auto& target : targets) {
    INFO(target);
    fs::remove(entry);
    fs::create_symlink(target, entry);
    CHECK(!cached(f, spec));
    CHECK(tables(lull::compiler::load_compile_inputs(spec)) == uncached);  // read, not stored through the link
    CHECK(fs::is_symlink(entry));
  }
  fs::remove(entry);
  REQUIRE(::mkfifo(entry.c_str(), 0600) == 0);
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == uncached);
  CHECK(fs::is_fifo(entry));
}

// Before the checksum line, an entry edited into other well-formed numbers
// was a hit that silently changed the compiled policy.
TEST_CASE("profile cache: an entry edited into other well-formed numbers is a miss", "[compiler][cache][bad-input]") {
  const Folder f = make_aged_artifact("cache_edited");
  const auto spec = spec_for(f, f.cache);
  const auto uncached = tables(lull::compiler::load_compile_inputs(spec_for(f, "")));
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == uncached);
  REQUIRE(cached(f, spec));
  const std::string entry =
      ArtifactReductionCache(f.cache, f.dir, spec.reduction.models, spec.reduction.percentile).path();
  std::string text = lull::read_whole_file(entry);
  // The last mantissa digit of the last line's largest sample, one up: still
  // a number, still at least the percentile.
  const std::size_t end = text.find("\nend\n");
  REQUIRE(end != std::string::npos);
  const std::size_t p = text.rfind('p', end);
  REQUIRE(p != std::string::npos);
  char& digit = text[p - 1];
  digit = digit == 'f' ? 'e' : digit == '9' ? 'a' : static_cast<char>(digit + 1);
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << text;
  CHECK(!cached(f, spec));
  CHECK(tables(lull::compiler::load_compile_inputs(spec)) == uncached);  // read again, and stored again
  CHECK(cached(f, spec));
}
