// The synthetic model sets of paper 7.3.2: a superset of the originals, new
// models on the segments of the Pareto front at exact accuracy steps, with
// latencies interpolated per batch size; 60 models from the 9 golden ones.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/profile/profile_interpolation.h"
#include "compiler/profile/profile_reduction.h"
#include "test/support/shared_data.h"

using lull::compiler::ModelTable;

namespace {

ModelTable model(const std::string& name, double acc, std::vector<double> lat_us) {
  ModelTable m;
  m.name = name;
  m.accuracy = acc;
  m.latency_us = std::move(lat_us);
  return m;
}

const ModelTable* find(const std::vector<ModelTable>& ms, const std::string& name) {
  for (const auto& m : ms)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("interpolation between two models: names, accuracies, latencies", "[interpolate]") {
  const std::vector<ModelTable> in{model("fast", 0.70, {10, 20, 30}), model("slow", 0.72, {30, 60, 90})};
  const auto out = lull::compiler::interpolate_pareto_front(in, 0.005);
  REQUIRE(out.size() == 5);  // 0.705, 0.710, 0.715 between 0.70 and 0.72 (0.72 itself is not duplicated)
  CHECK(out.front().name == "fast");
  CHECK(out.back().name == "slow");
  const ModelTable* mid = find(out, "interp_0.7100");
  REQUIRE(mid);
  CHECK(mid->accuracy == Approx(0.71).epsilon(1e-12));
  CHECK(mid->latency_us[0] == Approx(20).epsilon(1e-12));
  CHECK(mid->latency_us[2] == Approx(60).epsilon(1e-12));
  const ModelTable* first = find(out, "interp_0.7050");
  REQUIRE(first);
  CHECK(first->latency_us[1] == Approx(30).epsilon(1e-12));  // a quarter of the way from 20 to 60
}

TEST_CASE("interpolation: superset, Pareto front only, monotone, exact steps", "[interpolate]") {
  // "dominated" is slower than "b" and less accurate: it stays, but nothing is interpolated from it.
  const std::vector<ModelTable> in{model("a", 0.600, {10, 15}), model("b", 0.653, {20, 30}),
                                   model("dominated", 0.640, {25, 35}), model("c", 0.661, {40, 50})};
  const double step = 0.01;
  const auto out = lull::compiler::interpolate_pareto_front(in, step);
  for (const auto& m : in) {
    const ModelTable* kept = find(out, m.name);
    REQUIRE(kept);
    CHECK(kept->accuracy == m.accuracy);
    CHECK(kept->latency_us == m.latency_us);
  }
  // a -> b: 0.61 .. 0.65 (5 models); b -> c: 0.663 > 0.661 so none.
  REQUIRE(out.size() == in.size() + 5);
  std::vector<const ModelTable*> synthetic;
  for (const auto& m : out)
    if (m.name.rfind("interp_", 0) == 0) synthetic.push_back(&m);
  REQUIRE(synthetic.size() == 5);
  for (std::size_t i = 0; i < synthetic.size(); ++i) {
    CHECK(synthetic[i]->accuracy == Approx(0.600 + step * (i + 1)).epsilon(1e-12));
    CHECK(synthetic[i]->latency_us[0] > 10);
    CHECK(synthetic[i]->latency_us[0] < 20);
  }
  // Fastest first, and along the front accuracy rises with batch-1 latency.
  for (std::size_t i = 1; i < out.size(); ++i) CHECK(out[i - 1].lat_us(1) <= out[i].lat_us(1));
  std::vector<ModelTable> front;
  for (int i : lull::compiler::pareto_front(out)) front.push_back(out[i]);
  CHECK(front.size() == out.size() - 1);  // everything but "dominated"
  for (std::size_t i = 1; i < front.size(); ++i) CHECK(front[i - 1].accuracy < front[i].accuracy);
}

TEST_CASE("interpolation rejects a non-positive step", "[interpolate]") {
  const std::vector<ModelTable> in{model("a", 0.6, {1}), model("b", 0.7, {2})};
  CHECK_THROWS_AS(lull::compiler::interpolate_pareto_front(in, 0), std::invalid_argument);
  CHECK_THROWS_AS(lull::compiler::interpolate_pareto_front(in, -0.01), std::invalid_argument);
}

TEST_CASE("the 9 golden image models give the paper's 60-model set", "[interpolate][golden]") {
  LULL_REQUIRE_ARTIFACT();
  const auto nine = lull::test::golden_profiles();
  const auto sixty = lull::compiler::interpolate_pareto_front(nine.models, 0.005);
  CHECK(sixty.size() == 60);
  for (const auto& m : nine.models) CHECK(find(sixty, m.name));
  // Every interpolated latency lies between its two neighbours' on the front, per batch size.
  std::vector<ModelTable> originals = nine.models;
  std::sort(originals.begin(), originals.end(), [](auto& a, auto& b) { return a.accuracy < b.accuracy; });
  for (const auto& m : sixty) {
    if (m.name.rfind("interp_", 0) != 0) continue;
    const auto hi = std::find_if(originals.begin(), originals.end(), [&](auto& o) { return o.accuracy > m.accuracy; });
    REQUIRE(hi != originals.begin());
    REQUIRE(hi != originals.end());
    const auto& lo = *(hi - 1);
    for (std::size_t b = 0; b < m.latency_us.size(); ++b) {
      CHECK(m.latency_us[b] >= std::min(lo.latency_us[b], hi->latency_us[b]) - 1e-6);
      CHECK(m.latency_us[b] <= std::max(lo.latency_us[b], hi->latency_us[b]) + 1e-6);
    }
  }
}

TEST_CASE("interpolate_profile_set keeps the originals exactly and marks the set synthetic", "[interpolate][golden]") {
  LULL_REQUIRE_ARTIFACT();
  const auto raw =
      lull::compiler::import_artifact_profiles(lull::test::artifact_dir(), lull::test::accuracy_json(), "image");
  lull::compiler::InterpolationOptions opts;
  opts.models = lull::test::golden_models();
  const auto out = lull::compiler::interpolate_profile_set(raw, opts, lull::test::artifact_dir());
  CHECK(out.synthetic());
  CHECK(out.provenance().find("synthetic") == 0);
  CHECK(out.models_size() == 60);
  std::map<std::string, const lull::schema::ModelProfile*> by_name;
  for (const auto& m : raw.models()) by_name[m.name()] = &m;
  int originals = 0;
  for (const auto& m : out.models()) {
    if (m.name().rfind("interp_", 0) == 0) {
      CHECK(m.latencies_size() == 32);
      continue;
    }
    ++originals;
    REQUIRE(by_name.count(m.name()));
    CHECK(m.SerializeAsString() == by_name.at(m.name())->SerializeAsString());
  }
  CHECK(originals == 9);
  // The written set reduces and validates like any measured one.
  lull::compiler::ReductionOptions ro;
  ro.keep_all_models = true;
  const auto reduced = lull::compiler::reduce_profiles(out, ro, 32, "interpolated");
  CHECK(reduced.models.size() == 60);
}
