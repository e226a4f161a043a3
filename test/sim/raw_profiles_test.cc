// The simulator's sampled latencies read the RAMSIS artifact through the
// schema's artifact reader, the same one the compiler's import uses: the
// samples agree (in microseconds) with what the compiler imports, and a lull
// profile JSON written from that import gives the same samples again.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "compiler/profile/artifact_import.h"
#include "runtime/sim/raw_profiles.h"
#include "schema/profile_file.h"
#include "test/support/runtime_test_support.h"

TEST_CASE("raw profiles: artifact folder and imported JSON give the compiler's samples", "[sim][profiles]") {
  const std::string shared = lull::test::shared_dir();
  const std::string dir = shared + "/ramsis-artifact/profiles/image_cloud_cpu";
  const std::string acc = shared + "/ramsis-artifact/image_accuracy.json";
  LULL_REQUIRE_SHARED_DATA(std::filesystem::exists(dir), "ramsis-artifact/profiles/image_cloud_cpu");
  const std::vector<std::string> models{"resnet18", "efficientnet_b0"};
  const auto set = lull::compiler::import_artifact_profiles(dir, acc, "image");
  const std::string json = (std::filesystem::temp_directory_path() / "lull_raw_profiles_test.json").string();
  lull::write_profile_set_json(set, json);
  const auto from_dir = lull::sim::load_raw_profiles(dir, models);
  const auto from_json = lull::sim::load_raw_profiles(json, models);
  REQUIRE(from_dir.size() == 2);
  CHECK(from_json == from_dir);
  for (const auto& m : set.models()) {
    if (!from_dir.count(m.name())) continue;
    const auto& batches = from_dir.at(m.name());
    REQUIRE(batches.size() == static_cast<std::size_t>(m.latencies_size()));
    for (const auto& l : m.latencies()) {
      const auto& us = batches.at(static_cast<int>(l.batch()));
      REQUIRE(us.size() == static_cast<std::size_t>(l.samples_s_size()));
      for (int i = 0; i < l.samples_s_size(); ++i) CHECK(us[i] == l.samples_s(i) * 1e6);
    }
  }
  std::filesystem::remove(json);
  CHECK_THROWS_WITH(lull::sim::load_raw_profiles(dir, {"no_such_model"}), Catch::Contains("no_such_model"));
}
