// The fleet front end's split choice (runtime/core/split_chooser.h): an estimate
// over the last N arrivals, and hysteresis at the split's band.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include "runtime/core/split_chooser.h"

using lull::core::SplitChooser;
using lull::core::SplitChooserOptions;

TEST_CASE("split chooser: the estimate counts the last arrivals, the band holds with hysteresis", "[runtime][fleet]") {
  SplitChooserOptions o;
  o.arrivals = 21;
  SplitChooser s({10, 20, 40}, o);
  // 10 qps, one every 100 ms: after 11 arrivals the estimate is 10 arrivals / 1 s.
  int got = -1;
  for (int i = 0; i <= 10; ++i) got = s.on_arrival(i * 100'000);
  CHECK(s.estimate_qps() == Approx(10.0));
  CHECK(got == 0);
  // 21 qps: past 10 x 1.1, to the split for (10, 20], where it stays up to 20 x 1.1 = 22.
  std::int64_t t = 1'000'000;
  for (int i = 0; i < 30; ++i) got = s.on_arrival(t += 1'000'000 / 21);
  CHECK(s.estimate_qps() == Approx(21.0).epsilon(0.02));
  CHECK(got == 1);  // 21 is within (10 x 0.9, 20 x 1.1]
  for (int i = 0; i < 30; ++i) got = s.on_arrival(t += 1'000'000 / 23);
  CHECK(got == 2);  // 23 > 22
  for (int i = 0; i < 30; ++i) got = s.on_arrival(t += 1'000'000 / 19);
  CHECK(got == 2);  // 19 > 20 x 0.9: stays
  for (int i = 0; i < 30; ++i) got = s.on_arrival(t += 1'000'000 / 17);
  CHECK(got == 1);  // 17 <= 18
  // Above the last split: the last.
  for (int i = 0; i < 30; ++i) got = s.on_arrival(t += 1'000'000 / 100);
  CHECK(got == 2);
}

TEST_CASE("split chooser: a rise is seen within 0.5 s, and at a high load every arrival of the last 0.5 s counts",
          "[runtime][fleet]") {
  SplitChooser s({20, 40, 80, 1000, 2000});
  // 18 qps for a minute, then 60 qps: the last 200 arrivals would take about 3 s to see it.
  std::int64_t t = 0;
  for (int i = 0; i < 18 * 60; ++i) s.on_arrival(t += 1'000'000 / 18);
  CHECK(s.estimate_qps() == Approx(18).epsilon(0.02));
  CHECK(s.current() == 0);
  int arrivals = 0;
  while (s.current() != 2 && arrivals < 1000) {
    s.on_arrival(t += 1'000'000 / 60);
    ++arrivals;
  }
  CHECK(arrivals <= 30);  // 0.5 s at 60 qps
  // Then 1500 qps: as the 500 ms count sees it (linearly over 0.5 s), and not capped at 200 arrivals.
  arrivals = 0;
  while (s.current() != 4 && arrivals < 10000) {
    s.on_arrival(t += 1'000'000 / 1500);
    ++arrivals;
  }
  CHECK(arrivals <= 750);
  for (int i = 0; i < 3000; ++i) s.on_arrival(t += 1'000'000 / 1500);
  CHECK(s.estimate_qps() == Approx(1500).epsilon(0.01));
  CHECK(s.current() == 4);
}

TEST_CASE("split chooser: a moderate rise is seen within a few seconds, not after the 10 s window",
          "[runtime][fleet]") {
  // 5 qps for a minute, then 18 qps (fleet_e2e.sh's warm-up, then its bulk class): the last 0.5 s alone
  // cannot tell (9 arrivals against 2.5 predicted is within noise); the last 2 s can.
  SplitChooser s({6, 12, 18, 24});
  std::int64_t t = 0;
  for (int i = 0; i < 5 * 60; ++i) s.on_arrival(t += 1'000'000 / 5);
  CHECK(s.current() == 0);
  const std::int64_t rise = t;
  while (s.current() < 2 && t - rise < 20'000'000) s.on_arrival(t += 1'000'000 / 18);
  CHECK(t - rise <= 3'000'000);
}

TEST_CASE("split chooser: a window of at least 0.5 s and at most 10 s", "[runtime][fleet]") {
  SplitChooser s({1, 2, 4});
  CHECK(s.on_arrival(0) == 1);  // one arrival in 0.5 s: 2 qps, the split for (1, 2]
  CHECK(s.estimate_qps() == Approx(2.0));
  // One arrival every 4 s for a minute: the 10 s window holds 2 or 3 of them, so 0.2-0.3 qps.
  std::int64_t t = 0;
  for (int i = 0; i < 15; ++i) s.on_arrival(t += 4'000'000);
  CHECK(s.estimate_qps() <= 0.3);
  CHECK(s.current() == 0);
}

TEST_CASE("split chooser: a steady Poisson load rarely changes split", "[runtime][fleet]") {
  std::vector<double> loads;
  for (int l = 3; l <= 48; l += 3) loads.push_back(l);
  SplitChooser s(loads);
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> gap(19.5);
  double t = 0;
  int changes = 0, last = -1;
  while (t < 600) {
    t += gap(rng);
    const int now = s.on_arrival(static_cast<std::int64_t>(t * 1e6));
    if (t > 30 && now != last) ++changes;
    last = now;
  }
  CHECK(changes <= 10);  // a 500 ms count without hysteresis: thousands
}

TEST_CASE("split chooser: refuses no splits, unordered loads, bad options", "[runtime][fleet]") {
  CHECK_THROWS(SplitChooser({}));
  CHECK_THROWS(SplitChooser({2, 2}));
  SplitChooserOptions o;
  o.arrivals = 1;
  CHECK_THROWS(SplitChooser({1}, o));
}
