// Profile reduction (mdp-spec 1.1): percentile, OLS fill, monotone pass,
// batch N+1, model order and the Pareto front.
#include <catch2/catch.hpp>

#include "compiler/profile/latency_reduction.h"
#include "compiler/profile/profile_reduction.h"
#include "test/support/shared_data.h"

using namespace lull::compiler;

TEST_CASE("percentile interpolates linearly between closest ranks (numpy default)", "[compiler][profile]") {
  CHECK(percentile_linear({5, 1, 4, 2, 3}, 95) == Approx(4.8));
  CHECK(percentile_linear({5, 1, 4, 2, 3}, 50) == Approx(3.0));
  CHECK(percentile_linear({10, 20}, 25) == Approx(12.5));
  CHECK(percentile_linear({7}, 95) == Approx(7));
  CHECK(percentile_linear({1, 2, 3, 4}, 100) == Approx(4));
}

TEST_CASE("missing batch sizes are filled from the OLS line, measured ones kept", "[compiler][profile]") {
  // Measured on the line 8 + 2b ms except batch 4, which is a little off.
  const std::map<int, double> measured{{1, 0.010}, {2, 0.012}, {4, 0.0165}, {5, 0.018}};
  const auto t = complete_latency_table_us(measured, 6, 6);
  REQUIRE(t.size() == 7);
  CHECK(t[0] == Approx(10000));
  CHECK(t[3] == Approx(16500));  // measured value kept
  const auto line = fit_ols({1, 2, 4, 5}, {0.010, 0.012, 0.0165, 0.018});
  CHECK(t[2] == Approx(line.at(3) * 1e6));
  CHECK(t[5] == Approx(line.at(6) * 1e6));
}

TEST_CASE("the table is made non-decreasing by a backward pass", "[compiler][profile]") {
  const std::map<int, double> measured{{1, 0.020}, {2, 0.010}, {3, 0.030}, {4, 0.040}};
  const auto t = complete_latency_table_us(measured, 4, 4);
  CHECK(t[0] == Approx(10000));  // lowered to lat(2)
  CHECK(t[1] == Approx(10000));
  for (std::size_t b = 1; b + 1 < t.size(); ++b) CHECK(t[b] >= t[b - 1]);
}

TEST_CASE("batch N+1 comes from a second OLS line over the completed table", "[compiler][profile]") {
  const std::map<int, double> measured{{1, 0.010}, {2, 0.013}, {3, 0.014}};
  const auto t = complete_latency_table_us(measured, 3, 3);
  const auto second = fit_ols({1, 2, 3}, {0.010, 0.013, 0.014});
  CHECK(t[3] == Approx(second.at(4) * 1e6));
  // With N below the profiled range, lat(N+1) is still the line's value, not the measurement.
  const auto t2 = complete_latency_table_us({{1, 0.010}, {2, 0.013}, {3, 0.030}}, 1, 3);
  CHECK(t2.size() == 2);
  CHECK(t2[1] == Approx(fit_ols({1, 2, 3}, {0.010, 0.013, 0.030}).at(2) * 1e6));
}

TEST_CASE("artifact profiles: ordered by speed, Pareto front = the 9 golden models", "[compiler][profile]") {
  LULL_REQUIRE_ARTIFACT();
  const auto set = import_artifact_profiles(lull::test::artifact_dir(), lull::test::accuracy_json(), "image");
  REQUIRE(set.models_size() == 26);
  ReductionOptions opts;
  const auto pruned = reduce_profiles(set, opts, 32, "artifact");
  REQUIRE(pruned.models.size() == lull::test::golden_models().size());
  for (std::size_t i = 0; i < pruned.models.size(); ++i) CHECK(pruned.models[i].name == lull::test::golden_models()[i]);
  opts.keep_all_models = true;
  const auto all = reduce_profiles(set, opts, 32, "artifact");
  CHECK(all.models.size() == 26);
  for (std::size_t i = 1; i < all.models.size(); ++i) CHECK(all.models[i - 1].lat_us(1) <= all.models[i].lat_us(1));
  for (const auto& m : all.models) {
    REQUIRE(m.latency_us.size() == 33);
    for (std::size_t b = 1; b < 32; ++b) CHECK(m.latency_us[b] >= m.latency_us[b - 1]);
  }
}

TEST_CASE("far-out samples: one hiccup is named, a real tail or a tight spread is not", "[compiler][profile]") {
  std::vector<double> s(10, 0.028);
  s[3] = 0.264;  // the KServe sample: 264 ms at a 28 ms median
  double fence = 0;
  CHECK(far_out_samples(s, &fence) == std::vector<std::size_t>{3});
  CHECK(fence == Approx(0.042));  // 1.5x the median: the spread itself is 0
  // Two in ten over the fence: more than 1 in 50 (or one), a tail the percentile should see.
  s[7] = 0.250;
  CHECK(far_out_samples(s).empty());
  // Jitter of a few percent is never far out.
  CHECK(far_out_samples({0.028, 0.029, 0.028, 0.031, 0.030, 0.033}).empty());
  CHECK(far_out_samples({0.028, 0.5, 0.028}).empty());  // too few to tell
}

TEST_CASE("a profile one slow sample tips: the error names that sample and what to do", "[compiler][profile]") {
  // lull profile --max-batch 8, 10 samples each, against KServe (issue's case):
  // batch 1 holds one 264 ms sample; the medians grow 28, 30, ..., 42 ms.
  lull::schema::ProfileSet set;
  set.set_task("t");
  auto* m = set.add_models();
  m->set_name("tiny_net");
  m->set_accuracy(0.5);
  for (int b = 1; b <= 8; ++b) {
    auto* l = m->add_latencies();
    l->set_batch(static_cast<unsigned>(b));
    for (int k = 0; k < 10; ++k) l->add_samples_s(b == 1 && k == 4 ? 0.264 : 0.026 + 0.002 * b);
  }
  ReductionOptions opts;
  opts.percentile = 95;
  try {
    reduce_profiles(set, opts, 32, "p.json");
    FAIL("reduced");
  } catch (const ProfileError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("the fitted latency for batch") != std::string::npos);
    CHECK(what.find("batch 1.samples_s[4] is 264 ms against that batch's median 28 ms, which tips it") !=
          std::string::npos);
    CHECK(what.find("measure again") != std::string::npos);
  }
  // The same profile with that sample measured again (what lull profile now does) compiles.
  m->mutable_latencies(0)->set_samples_s(4, 0.028);
  CHECK(reduce_profiles(set, opts, 32, "p.json").models.size() == 1);
}
