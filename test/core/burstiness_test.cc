// The load monitor's burstiness estimate (runtime/core/burstiness_estimator.*),
// the rule that picks a compiled arrival pattern for it
// (runtime/core/pattern_switcher.*), and the catalog's choice by (workers,
// pattern, load).
#include <catch2/catch.hpp>

#include "runtime/core/burstiness_estimator.h"
#include "runtime/core/pattern_switcher.h"
#include "runtime/core/policy_catalog.h"
#include "runtime/sim/arrivals.h"
#include "schema/arrival_classify.h"
#include "test/support/runtime_test_support.h"

using lull::ArrivalProcess;
using lull::core::BurstinessEstimate;
using lull::core::BurstinessEstimator;
using lull::core::PatternSwitcher;

namespace {

BurstinessEstimate estimate_of(const ArrivalProcess& p, double qps, int arrivals, std::uint64_t seed,
                               int window = BurstinessEstimator::kDefaultWindow) {
  lull::sim::RateArrivals source({{0, 1e9, qps}}, p, seed);
  BurstinessEstimator e(window);
  std::int64_t t = 0;
  for (int i = 0; i < arrivals && source.next(&t); ++i) e.record(t);
  return e.estimate();
}

BurstinessEstimate ready(const ArrivalProcess& p) {
  BurstinessEstimate e;
  e.ready = true;
  e.process = p;
  return e;
}

}  // namespace

TEST_CASE("burstiness estimate: gap CV^2 and count dispersion of sampled processes", "[runtime][burstiness]") {
  // One full window and more, at two rates: the estimates do not depend on the rate.
  for (double qps : {100.0, 3000.0}) {
    const auto poisson = estimate_of(ArrivalProcess::poisson(), qps, 20000, 1);
    REQUIRE(poisson.ready);
    CHECK(poisson.gap_cv2 == Approx(1).margin(0.15));
    CHECK(poisson.dispersion == Approx(1).margin(0.4));
    CHECK(poisson.process.burstiness() < 1.3);
    const auto g4 = estimate_of(ArrivalProcess::gamma(4), qps, 20000, 2);
    CHECK(g4.gap_cv2 == Approx(4).epsilon(0.25));
    CHECK(g4.dispersion == Approx(4).epsilon(0.45));
    CHECK(g4.process.kind == ArrivalProcess::Kind::kGamma);
    const auto b4 = estimate_of(ArrivalProcess::batch(4), qps, 20000, 3);
    CHECK(b4.gap_cv2 == Approx(lull::batch_gap_cv2(4)).epsilon(0.25));
    CHECK(b4.dispersion == Approx(4).epsilon(0.45));
    CHECK(b4.process.kind == ArrivalProcess::Kind::kBatch);
  }
}

TEST_CASE("burstiness estimate: not ready before a window, follows a change of pattern", "[runtime][burstiness]") {
  CHECK_FALSE(estimate_of(ArrivalProcess::gamma(4), 1000, BurstinessEstimator::kDefaultWindow / 2, 4).ready);
  // Poisson for 30 s, then gamma:8: after a window of gamma the estimate is bursty.
  lull::sim::RateArrivals source({{0, 30, 1000}, {30, 60, 1000}},
                                 {{0, ArrivalProcess::poisson()}, {30, ArrivalProcess::gamma(8)}}, 5);
  BurstinessEstimator e;
  std::int64_t t = 0;
  double before = 0;
  while (source.next(&t)) {
    e.record(t);
    if (t < 30'000'000) before = e.estimate().process.burstiness();
  }
  CHECK(before < 1.5);
  CHECK(e.estimate().process.burstiness() > 5);
  CHECK(e.estimate().process.kind == ArrivalProcess::Kind::kGamma);
}

TEST_CASE("burstiness estimate: a 2x change of rate re-sizes the bins", "[runtime][burstiness]") {
  lull::sim::RateArrivals source({{0, 20, 200}, {20, 60, 2000}}, ArrivalProcess::poisson(), 6);
  BurstinessEstimator e;
  std::int64_t t = 0;
  while (source.next(&t)) e.record(t);
  const auto s = e.estimate();
  REQUIRE(s.ready);
  CHECK(s.bin_us == Approx(BurstinessEstimator::kBinMean * 500).epsilon(0.2));  // kBinMean arrivals at 2000 QPS
  CHECK(s.dispersion == Approx(1).margin(0.4));                                 // bins of the old width would read ~10x
  CHECK_THROWS(BurstinessEstimator(10));
  CHECK_THROWS(BurstinessEstimator(8000, 2));
}

TEST_CASE("burstiness estimate: Poisson at 100,000 to 1,000,000 QPS is Poisson (whole-microsecond times)",
          "[runtime][burstiness]") {
  // At 1,000,000 QPS a gap is 1 us on average and rounding the times to
  // whole microseconds added 1/6 us^2 to its variance: Poisson read as
  // gamma:1.17 in every reading, and a Poisson library warned of bursts.
  for (double qps : {100'000.0, 300'000.0, 1'000'000.0})
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      INFO(qps << " QPS, seed " << seed);
      const auto e = estimate_of(ArrivalProcess::poisson(), qps, 12000, seed);
      REQUIRE(e.ready);
      CHECK(e.gap_cv2 == Approx(1).margin(0.08));
      CHECK(e.process.is_poisson());
    }
  const auto g2 = estimate_of(ArrivalProcess::gamma(2), 1'000'000, 12000, 9);
  CHECK(g2.process.kind == ArrivalProcess::Kind::kGamma);
  CHECK(g2.process.burstiness() == Approx(2).epsilon(0.1));
}

TEST_CASE("burstiness estimate: a shard's every G-th arrival is read back as the whole stream",
          "[runtime][burstiness]") {
  // A shard of G behind a round-robin balancer records every G-th arrival:
  // gamma:4 looks like gamma:4/G, Poisson like Erlang-G. With
  // set_thinning(G) the estimate is the stream's, ready after 1/G of the window.
  for (int g : {2, 4, 8})
    for (const ArrivalProcess& p : {ArrivalProcess::poisson(), ArrivalProcess::gamma(4), ArrivalProcess::batch(4)}) {
      INFO("G = " << g << ", " << lull::arrival_process_text(p));
      lull::sim::RateArrivals source({{0, 1e9, 4000}}, p, 20 + static_cast<std::uint64_t>(g));
      BurstinessEstimator thinned, plain;
      thinned.set_thinning(g);
      std::int64_t t = 0;
      const auto record = [&](int arrivals) {
        for (int i = 0; i < arrivals; ++i) {
          for (int k = 0; k < g; ++k) source.next(&t);
          thinned.record(t);
          plain.record(t);
        }
      };
      record(BurstinessEstimator::kDefaultWindow / (2 * g));
      CHECK_FALSE(thinned.estimate().ready);
      record(2 * BurstinessEstimator::kDefaultWindow / g);  // ready by now (one lull waits as many stream arrivals)
      REQUIRE(thinned.estimate().ready);
      record(BurstinessEstimator::kDefaultWindow);
      const auto e = thinned.estimate();
      if (p.is_poisson()) {
        CHECK(e.process.is_poisson());
      } else {
        CHECK(e.process.burstiness() == Approx(4).epsilon(0.25));  // the pattern switcher's tolerance
        CHECK(plain.estimate().process.burstiness() < 4.0 / (1 + PatternSwitcher::kDefaultTolerance));
      }
    }
  BurstinessEstimator e;
  CHECK_THROWS_AS(e.set_thinning(0), std::invalid_argument);
}

TEST_CASE("burstiness estimate: the rate's modulation is about 0 when steady, its CV^2 when it moves",
          "[runtime][burstiness]") {
  for (const auto& p : {ArrivalProcess::poisson(), ArrivalProcess::gamma(4), ArrivalProcess::batch(4)}) {
    lull::sim::RateArrivals source({{0, 1e9, 2000}}, p, 11);
    BurstinessEstimator e;
    std::int64_t t = 0;
    for (int i = 0; i < 20000 && source.next(&t); ++i) e.record(t);
    INFO(lull::arrival_process_text(p));
    CHECK(e.rate_cv2() < 0.02);
  }
  // 1000 and 3000 QPS alternating every 400 ms (mean 2000: rate CV^2 0.25),
  // Poisson within each: the gaps stay near Poisson, the modulation shows.
  std::vector<lull::RateSegment> segments;
  for (int i = 0; i < 100; ++i) segments.push_back({0.4 * i, 0.4 * (i + 1), i % 2 ? 3000.0 : 1000.0});
  lull::sim::RateArrivals source(segments, ArrivalProcess::poisson(), 12);
  BurstinessEstimator e;
  std::int64_t t = 0;
  for (int i = 0; i < 30000 && source.next(&t); ++i) e.record(t);
  CHECK(e.rate_cv2() == Approx(0.25).margin(0.08));
  CHECK(BurstinessEstimator().rate_cv2() == 0);
}

TEST_CASE("pattern switcher: smallest compiled burstiness covering the estimate, with hysteresis",
          "[runtime][burstiness]") {
  const std::vector<ArrivalProcess> lib = {ArrivalProcess::poisson(), ArrivalProcess::gamma(2),
                                           ArrivalProcess::gamma(4), ArrivalProcess::gamma(8),
                                           ArrivalProcess::batch(4)};
  PatternSwitcher s;
  CHECK(s.update(BurstinessEstimate{}, lib) == ArrivalProcess::poisson());               // not ready: the least bursty
  CHECK(s.update(ready(ArrivalProcess::gamma(1.2)), lib) == ArrivalProcess::poisson());  // within the tolerance
  CHECK(s.update(ready(ArrivalProcess::gamma(3.3)), lib) == ArrivalProcess::gamma(4));
  CHECK(s.update(ready(ArrivalProcess::gamma(2.5)), lib) == ArrivalProcess::gamma(4));  // not clearly below: stays
  CHECK(s.update(ready(ArrivalProcess::gamma(4.9)), lib) == ArrivalProcess::gamma(4));  // within the tolerance
  CHECK(s.update(ready(ArrivalProcess::gamma(1.9)), lib) == ArrivalProcess::gamma(2));  // at or below gamma:2
  CHECK(s.update(ready(ArrivalProcess::batch(3.8)), lib) == ArrivalProcess::batch(4));  // up, its own family
  CHECK(s.update(ready(ArrivalProcess::poisson()), lib) == ArrivalProcess::poisson());
  CHECK(s.switches() == 4);
  CHECK_FALSE(s.beyond());
  // Beyond the library: the most bursty, or (compiling online) the estimate rounded up to a power of two.
  CHECK(s.update(ready(ArrivalProcess::gamma(13)), lib) == ArrivalProcess::gamma(8));
  CHECK(s.beyond());
  CHECK(s.beyond_events() == 1);
  PatternSwitcher online(true);
  online.update(BurstinessEstimate{}, lib);
  CHECK(online.update(ready(ArrivalProcess::batch(11)), lib) == ArrivalProcess::batch(16));  // 11 / 1.25 -> 16
  // A family the library lacks: the other family's covering pattern.
  PatternSwitcher g(false);
  const std::vector<ArrivalProcess> gammas = {ArrivalProcess::poisson(), ArrivalProcess::gamma(4)};
  g.update(BurstinessEstimate{}, gammas);
  CHECK(g.update(ready(ArrivalProcess::batch(3.5)), gammas) == ArrivalProcess::gamma(4));
}

TEST_CASE("pattern switcher does not flap on the estimate's noise", "[runtime][burstiness]") {
  // gamma:4 traffic read every bin for 10 minutes at 500 QPS: one switch (up), none back.
  const std::vector<ArrivalProcess> lib = {ArrivalProcess::poisson(), ArrivalProcess::gamma(2),
                                           ArrivalProcess::gamma(4), ArrivalProcess::gamma(8)};
  lull::sim::RateArrivals source({{0, 600, 500}}, ArrivalProcess::gamma(4), 8);
  BurstinessEstimator e;
  PatternSwitcher s;
  std::int64_t t = 0;
  std::uint64_t bins = 0;
  while (source.next(&t)) {
    e.record(t);
    if (e.bins_closed() != bins) bins = e.bins_closed(), s.update(e.estimate(), lib);
  }
  CHECK(s.current() == ArrivalProcess::gamma(4));
  CHECK(s.switches() == 1);
}

TEST_CASE("catalog: sets per (workers, pattern), chosen by pattern then load", "[runtime][burstiness]") {
  auto t = lull::test::tiny_table();  // 2 workers, loads 100 and 200
  auto g4 = t;
  g4.arrivals = ArrivalProcess::gamma(4);
  g4.policies[0].expected_violation_rate = 0.25;  // tells the sets apart
  lull::core::PolicyCatalog catalog({t, g4});
  CHECK(catalog.patterns().size() == 2);
  const auto p = catalog.choose(2, 150, false, ArrivalProcess::poisson());
  CHECK(p.arrivals == ArrivalProcess::poisson());
  CHECK(p.policy->load_qps == 200);
  const auto g = catalog.choose(2, 50, false, ArrivalProcess::gamma(4));
  CHECK(g.arrivals == ArrivalProcess::gamma(4));
  CHECK(g.policy->expected_violation_rate == 0.25);
  // A pattern not held: the covering one (gamma:3 -> gamma:4; gamma:8 -> the most bursty).
  CHECK(catalog.choose(2, 50, false, ArrivalProcess::gamma(3)).arrivals == ArrivalProcess::gamma(4));
  CHECK(catalog.choose(2, 50, false, ArrivalProcess::gamma(8)).arrivals == ArrivalProcess::gamma(4));
  // What is missing for it: the pattern at the worker count.
  const auto want = catalog.wanted(2, 150, ArrivalProcess::gamma(8));
  CHECK(want.workers == 2);
  CHECK(want.arrivals == ArrivalProcess::gamma(8));
  CHECK(catalog.wanted(2, 150, ArrivalProcess::gamma(4)).workers == 0);
  // Two sets for one (workers, pattern) are refused, naming both.
  REQUIRE_THROWS_WITH(lull::core::PolicyCatalog({t, g4, g4}),
                      Catch::Contains("two sets for 2 workers and arrivals gamma:4"));
}

TEST_CASE("arrival schedule: the process changes at each step, the rate does not", "[runtime][burstiness][arrivals]") {
  lull::sim::RateArrivals source(
      {{0, 100, 500}, {100, 200, 500}},
      {{0, ArrivalProcess::poisson()}, {50, ArrivalProcess::gamma(4)}, {150, ArrivalProcess::batch(4)}}, 9);
  std::vector<std::vector<double>> gaps(4);
  std::vector<int> counts(4, 0);
  std::int64_t t = 0, last = -1;
  while (source.next(&t)) {
    REQUIRE(t >= 0);
    REQUIRE(t < 200'000'000);
    const int quarter = static_cast<int>(t / 50'000'000);
    ++counts[quarter];
    if (last >= 0 && last / 50'000'000 == quarter) gaps[quarter].push_back(static_cast<double>(t - last));
    last = t;
  }
  auto cv2 = [](const std::vector<double>& g) {
    double s = 0, s2 = 0;
    for (double x : g) s += x, s2 += x * x;
    const double m = s / g.size();
    return (s2 / g.size() - m * m) / (m * m);
  };
  for (int q = 0; q < 4; ++q) CHECK(counts[q] == Approx(25000).epsilon(0.05));
  CHECK(cv2(gaps[0]) == Approx(1).epsilon(0.1));
  CHECK(cv2(gaps[1]) == Approx(4).epsilon(0.15));  // gamma:4 across the rate segments' boundary at 100 s
  CHECK(cv2(gaps[2]) == Approx(4).epsilon(0.15));
  CHECK(cv2(gaps[3]) == Approx(lull::batch_gap_cv2(4)).epsilon(0.15));
  CHECK_THROWS(lull::sim::RateArrivals({{0, 1, 1}}, std::vector<lull::ArrivalStep>{}, 1));
}
