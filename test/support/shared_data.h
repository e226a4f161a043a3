#pragma once
// Shared by the compiler test binaries: the ../shared data's paths, whether
// it is there (LULL_REQUIRE_ARTIFACT skips a test saying so, or fails it under
// LULL_REQUIRE_SHARED=1), and the golden cases' profiles.
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/profile/artifact_import.h"
#include "compiler/profile/profile_reduction.h"
#include "test/support/shared_dir.h"

namespace lull::test {

inline std::string artifact_dir() { return shared_dir() + "/ramsis-artifact/profiles/image_cloud_cpu"; }
inline std::string accuracy_json() { return shared_dir() + "/ramsis-artifact/image_accuracy.json"; }
inline bool have_artifact() {
  return std::filesystem::exists(artifact_dir()) && std::filesystem::exists(accuracy_json());
}
inline std::string text_artifact_dir() { return shared_dir() + "/ramsis-artifact/profiles/text_cloud_cpu"; }
inline std::string text_accuracy_json() { return shared_dir() + "/ramsis-artifact/text_accuracy.json"; }
inline bool have_text_artifact() {
  return std::filesystem::exists(text_artifact_dir()) && std::filesystem::exists(text_accuracy_json());
}
inline bool have_golden() { return std::filesystem::exists(shared_dir() + "/golden/image_fld100_max.json"); }

inline const std::vector<std::string>& golden_models() {
  static const std::vector<std::string> m{"shufflenet_v2_x0_5", "mobilenet_v3_large", "efficientnet_b0",
                                          "efficientnet_b2",    "efficientnet_b3",    "efficientnet_b4",
                                          "efficientnet_v2_s",  "efficientnet_v2_m",  "efficientnet_v2_l"};
  return m;
}

// The 9 Pareto image models from the artifact, reduced at p95, N = 32.
inline compiler::ReducedProfiles golden_profiles() {
  static const compiler::ReducedProfiles reduced = [] {
    const auto set = compiler::import_artifact_profiles(artifact_dir(), accuracy_json(), "image");
    compiler::ReductionOptions opts;
    opts.models = golden_models();
    return compiler::reduce_profiles(set, opts, 32, artifact_dir());
  }();
  return reduced;
}

}  // namespace lull::test

#define LULL_REQUIRE_ARTIFACT() \
  LULL_REQUIRE_SHARED_DATA(lull::test::have_artifact() && lull::test::have_golden(), "ramsis-artifact/ or golden/")
