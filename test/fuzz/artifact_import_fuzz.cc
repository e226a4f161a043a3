// libFuzzer target: the RAMSIS artifact reader (schema/artifact_reader) and
// the compiler's import over it (compiler/profile/artifact_import). One input
// describes a small artifact: parts separated by "\n--8<--\n" (fuzz_support.h),
// the first the accuracy table, each further one a profile file whose first
// line is its path under the artifact folder (e.g. "resnet/resnet_bsize-2_profile.json").
// Refusals must be one line naming a file of the artifact.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "compiler/profile/artifact_import.h"
#include "schema/artifact_reader.h"
#include "test/fuzz/fuzz_support.h"

namespace {

// Keeps a fuzzed relative path inside the artifact folder.
bool safe_relative(const std::string& p) {
  if (p.empty() || p.size() > 64 || p[0] == '/' || p.find("..") != std::string::npos) return false;
  for (char c : p)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/')) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const auto parts = lull::fuzz::split_parts(data, size, 5);
  const fs::path root = lull::fuzz::scratch_dir() / "artifact";
  fs::remove_all(root);
  const std::string acc = lull::fuzz::write_scratch("artifact/accuracy.json", parts[0]);
  const std::string dir = (root / "profiles").string();
  fs::create_directories(dir);
  for (size_t i = 1; i < parts.size(); ++i) {
    const auto nl = parts[i].find('\n');
    if (nl == std::string::npos) continue;
    const std::string rel = parts[i].substr(0, nl);
    if (!safe_relative(rel)) continue;
    std::error_code ec;
    fs::create_directories((fs::path(dir) / rel).parent_path(), ec);
    if (ec || fs::is_directory(fs::path(dir) / rel)) continue;
    lull::fuzz::write_scratch("artifact/profiles/" + rel, parts[i].substr(nl + 1));
  }
  try {
    const auto set = lull::compiler::import_artifact_profiles(dir, acc, "fuzz");
    for (const auto& m : set.models())
      for (const auto& l : m.latencies())
        for (double s : l.samples_s())
          if (!(s > 0 && std::isfinite(s))) lull::fuzz::finding("an imported sample is not positive and finite");
  } catch (const std::runtime_error& e) {
    lull::fuzz::check_error_names(e.what(), root.string());
  }
  return 0;
}
