// Validation of profile sets in the library (the CLI tests check the messages end to end).
#include <catch2/catch.hpp>

#include "compiler/profile/profile_reduction.h"
#include "schema/profile_file.h"

using namespace lull::compiler;

TEST_CASE("the tiny profile reduces with p95 and OLS fill", "[compiler][profile]") {
  const auto set = lull::read_profile_set_json(std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json");
  ReductionOptions o;
  const auto r = reduce_profiles(set, o, 8, "tiny");
  REQUIRE(r.models.size() == 2);  // "slow" is slower but more accurate: on the front
  CHECK(r.models[0].name == "fast");
  CHECK(r.models[0].lat_us(1) == Approx(4950));
  CHECK(r.models[0].lat_us(2) == Approx(6000));
  CHECK(r.models[0].lat_us(3) > 6000);
  CHECK(r.models[0].lat_us(3) < 9000);
  CHECK(r.synthetic);
}

TEST_CASE("a dominated model is pruned unless all models are kept", "[compiler][profile]") {
  auto set = lull::read_profile_set_json(std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json");
  auto* m = set.add_models();
  *m = set.models(1);
  m->set_name("slow_and_worse");
  m->set_accuracy(0.7);
  m->mutable_latencies(0)->set_latency_s(0.013);  // slower than "slow" and less accurate
  ReductionOptions o;
  CHECK(reduce_profiles(set, o, 8, "tiny").models.size() == 2);
  o.keep_all_models = true;
  CHECK(reduce_profiles(set, o, 8, "tiny").models.size() == 3);
  o.models = {"slow", "fast"};
  const auto chosen = reduce_profiles(set, o, 8, "tiny");
  REQUIRE(chosen.models.size() == 2);
  CHECK(chosen.models[0].name == "fast");  // ordered by speed whatever the order asked
  o.models = {"nope"};
  CHECK_THROWS_WITH(reduce_profiles(set, o, 8, "tiny"), Catch::Contains("nope"));
}

TEST_CASE("duplicate names and duplicate batch sizes are refused", "[compiler][profile]") {
  auto set = lull::read_profile_set_json(std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json");
  auto dup = set;
  dup.mutable_models(1)->set_name("fast");
  CHECK_THROWS_WITH(validate_profile_set(dup, "f.json"), Catch::Contains("f.json: models[1] (fast).name"));
  auto dupb = set;
  dupb.mutable_models(0)->mutable_latencies(1)->set_batch(1);
  CHECK_THROWS_WITH(validate_profile_set(dupb, "f.json"), Catch::Contains("appears twice"));
}
