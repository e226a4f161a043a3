// The drift rule (runtime/session/latency_drift.h) on made-up latencies: when a
// (model, batch size) pair starts and stops drifting, the percentile it
// judges by, what it ignores, and the corrected profile it hands to a
// recompilation.
#include <catch2/catch.hpp>

#include <limits>
#include <stdexcept>

#include "runtime/session/latency_drift.h"

using lull::session::DriftRule;
using lull::session::LatencyDriftDetector;
using Change = LatencyDriftDetector::Change;

namespace {

std::vector<lull::core::ModelInfo> two_models() {
  return {{"fast", 0.6, {10'000, 14'000, 20'000}}, {"slow", 0.8, {30'000, 40'000, 55'000}}};
}

DriftRule rule(int window, int min_samples, double percentile, double tolerance) {
  DriftRule r;
  r.window = window;
  r.min_samples = min_samples;
  r.percentile = percentile;
  r.tolerance = tolerance;
  return r;
}

}  // namespace

TEST_CASE("latency drift: no verdict below min_samples, drift once the percentile exceeds the tolerance",
          "[serve][drift]") {
  LatencyDriftDetector d(two_models(), rule(10, 5, 80, 0.25));
  // fast, batch 2: profiled 14 ms; 25% over is 17.5 ms.
  for (int i = 0; i < 4; ++i) CHECK(d.observe(0, 2, 30'000) == Change::kNone);  // 4 < min_samples
  CHECK(d.pair(0, 2).samples == 4);
  CHECK_FALSE(d.pair(0, 2).drifting);
  CHECK(d.judged().empty());
  CHECK(d.observe(0, 2, 30'000) == Change::kStarted);  // the fifth: p80 of five 30 ms batches
  CHECK(d.pair(0, 2).drifting);
  CHECK(d.pair(0, 2).observed_us == 30'000);
  CHECK(d.drifting() == 1);
  CHECK(d.drift_starts() == 1);
  CHECK(d.observe(0, 2, 30'000) == Change::kNone);  // still drifting: one start, not one per batch
  CHECK(d.drift_starts() == 1);
  // Other pairs are judged on their own.
  CHECK_FALSE(d.pair(0, 1).drifting);
  CHECK(d.pair(1, 2).samples == 0);
}

TEST_CASE("latency drift: just inside the tolerance is no drift, the percentile, not the mean, decides",
          "[serve][drift]") {
  LatencyDriftDetector d(two_models(), rule(10, 10, 80, 0.25));
  // slow, batch 1: profiled 30 ms, limit 37.5 ms. Eight fast batches and two
  // very slow ones: the mean (~ 42 ms) is over, the p80 (the 8th of 10) is not.
  for (int i = 0; i < 8; ++i) d.observe(1, 1, 31'000);
  CHECK(d.observe(1, 1, 90'000) == Change::kNone);
  CHECK(d.observe(1, 1, 90'000) == Change::kNone);
  CHECK(d.pair(1, 1).observed_us == 31'000);
  CHECK_FALSE(d.pair(1, 1).drifting);
  // A third slow batch pushes the oldest fast one out: now 3 of 10 are slow,
  // and the p80 is 90 ms.
  CHECK(d.observe(1, 1, 90'000) == Change::kStarted);
  CHECK(d.pair(1, 1).observed_us == 90'000);
  // Exactly at the limit does not start drift.
  LatencyDriftDetector e(two_models(), rule(4, 4, 100, 0.25));
  for (int i = 0; i < 4; ++i) CHECK(e.observe(1, 1, 37'500) == Change::kNone);
  CHECK_FALSE(e.pair(1, 1).drifting);
  CHECK(e.observe(1, 1, 37'501) == Change::kStarted);
}

TEST_CASE("latency drift: ends only back within half the tolerance (no flapping at the edge)", "[serve][drift]") {
  LatencyDriftDetector d(two_models(), rule(4, 4, 100, 0.5));
  // fast, batch 1: profiled 10 ms; starts over 15 ms, ends at or under 12.5 ms.
  for (int i = 0; i < 4; ++i) d.observe(0, 1, 16'000);
  REQUIRE(d.pair(0, 1).drifting);
  for (int i = 0; i < 4; ++i) CHECK(d.observe(0, 1, 14'000) == Change::kNone);  // under 15, over 12.5
  CHECK(d.pair(0, 1).drifting);
  for (int i = 0; i < 3; ++i) CHECK(d.observe(0, 1, 12'000) == Change::kNone);  // one 14 ms left in the window
  CHECK(d.observe(0, 1, 12'000) == Change::kEnded);
  CHECK(d.drifting() == 0);
  CHECK(d.drift_starts() == 1);
  for (int i = 0; i < 4; ++i) d.observe(0, 1, 20'000);
  CHECK(d.drift_starts() == 2);
}

TEST_CASE("latency drift: faster than profiled is no drift, unknown pairs and bad values are ignored",
          "[serve][drift]") {
  LatencyDriftDetector d(two_models(), rule(4, 2, 95, 0.1));
  for (int i = 0; i < 4; ++i) CHECK(d.observe(1, 3, 1'000) == Change::kNone);
  CHECK_FALSE(d.pair(1, 3).drifting);
  CHECK(d.pair(1, 3).samples == 4);
  CHECK(d.observe(1, 4, 1e9) == Change::kNone);  // batch 4: past N+1 (a fallback batch), no profile
  CHECK(d.observe(2, 1, 1e9) == Change::kNone);  // no model 2
  CHECK(d.observe(0, 0, 1e9) == Change::kNone);
  CHECK(d.observe(0, 1, -5) == Change::kNone);
  CHECK(d.observe(0, 1, std::numeric_limits<double>::infinity()) == Change::kNone);
  CHECK(d.pair(0, 1).samples == 0);
  CHECK(d.judged().size() == 1);
}

TEST_CASE("latency drift: the corrected profile for recompiling", "[serve][drift]") {
  LatencyDriftDetector d(two_models(), rule(4, 2, 100, 0.25));
  // fast: batch 2 observed at 21 ms (profiled 14: ratio 1.5); batch 1 at 9 ms (faster, ratio 0.9).
  d.observe(0, 2, 21'000);
  d.observe(0, 2, 21'000);
  d.observe(0, 1, 9'000);
  d.observe(0, 1, 9'000);
  // slow: nothing observed.
  const auto lat = d.corrected_latency_us();
  REQUIRE(lat.size() == 2);
  // Observed where judged; batch 3 unobserved: 20 ms x the model's largest ratio 1.5.
  CHECK(lat[0] == std::vector<double>{9'000, 21'000, 30'000});
  // An unobserved model: the largest ratio of any model (1.5), never below the profile.
  CHECK(lat[1] == std::vector<double>{45'000, 60'000, 82'500});
  // Only faster observations: unobserved models keep their profile (ratio at least 1),
  // and the result stays non-decreasing in the batch size.
  LatencyDriftDetector f(two_models(), rule(4, 1, 100, 0.25));
  f.observe(0, 1, 15'000);  // ratio 1.5 on batch 1 ...
  f.observe(0, 2, 12'000);  // ... but batch 2 faster than batch 1 was observed
  const auto lat2 = f.corrected_latency_us();
  CHECK(lat2[0] == std::vector<double>{15'000, 15'000, 30'000});
  LatencyDriftDetector g(two_models(), rule(4, 1, 100, 0.25));
  g.observe(1, 1, 15'000);  // slow model faster than profiled (ratio 0.5)
  CHECK(g.corrected_latency_us()[0] == std::vector<double>{10'000, 14'000, 20'000});
  CHECK(g.corrected_latency_us()[1] == std::vector<double>{15'000, 20'000, 27'500});
}

TEST_CASE("latency drift: the verdict at p95, the corrected profile at the plan's p100", "[serve][drift]") {
  DriftRule r = rule(20, 20, 95, 0.25);
  r.plan_percentile = 100;
  LatencyDriftDetector d(two_models(), r);
  // fast, batch 1 (profiled 10 ms): 19 batches on time and one at 50 ms.
  for (int i = 0; i < 19; ++i) d.observe(0, 1, 10'000);
  CHECK(d.observe(0, 1, 50'000) == Change::kNone);  // p95 of 20 is the 19th: 10 ms
  CHECK(d.pair(0, 1).observed_us == 10'000);
  CHECK(d.pair(0, 1).observed_plan_us == 50'000);
  CHECK_FALSE(d.pair(0, 1).drifting);
  // A plan made with the slowest sample recompiles with the slowest observed.
  CHECK(d.corrected_latency_us()[0] == std::vector<double>{50'000, 70'000, 100'000});
  // Two slow batches in twenty reach the p95: drift.
  CHECK(d.observe(0, 1, 50'000) == Change::kStarted);
  CHECK(d.pair(0, 1).observed_us == 50'000);
}

TEST_CASE("latency drift: a rule out of range is refused", "[serve][drift]") {
  CHECK_THROWS_AS(LatencyDriftDetector(two_models(), rule(0, 1, 95, 0.25)), std::invalid_argument);
  CHECK_THROWS_AS(LatencyDriftDetector(two_models(), rule(10, 11, 95, 0.25)), std::invalid_argument);
  CHECK_THROWS_AS(LatencyDriftDetector(two_models(), rule(10, 5, 0, 0.25)), std::invalid_argument);
  CHECK_THROWS_AS(LatencyDriftDetector(two_models(), rule(10, 5, 95, 0)), std::invalid_argument);
  DriftRule bad_plan = rule(10, 5, 95, 0.25);
  bad_plan.plan_percentile = 101;
  CHECK_THROWS_AS(LatencyDriftDetector(two_models(), bad_plan), std::invalid_argument);
}
