// Streams drawn over a moving rate (a rate file's segments, as `lull
// simulate --trace rate-file:` and `lull loadgen --rate-file` draw them):
// each rate's mean count, the dispersion of counts over windows, for
// Poisson, gamma and evenly spaced arrivals within. Tolerances are stated
// per check, in standard errors of the estimate, and sized so the bug they
// guard (a renewal restarted at every rate change: +(CV^2 - 1) / 2 arrivals
// per segment) fails them several times over.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/sim/arrivals.h"
#include "test/support/runtime_test_support.h"

namespace {

using namespace lull::sim;
using lull::test::drain;

// 1 s segments alternating `high` and `low` QPS, `pairs` of each, high first:
// a two-state modulated rate with fixed state times.
std::vector<RateSegment> alternating(double high, double low, int pairs) {
  std::vector<RateSegment> out;
  for (int i = 0; i < 2 * pairs; ++i) out.push_back({double(i), double(i + 1), i % 2 == 0 ? high : low});
  return out;
}

struct Stats {
  double mean = 0, idc = 0;  // mean count per window, variance / mean
};

// Counts per 1 s window over windows first, first + step, ... below `windows`.
Stats window_counts(const std::vector<std::int64_t>& t_us, int windows, int first, int step = 2) {
  std::vector<double> n(windows, 0);
  // An arrival drawn just before the last segment's end can round up to
  // the end itself in microseconds: it belongs to the last window.
  for (auto t : t_us) n[std::min<std::size_t>(static_cast<std::size_t>(t / 1'000'000), windows - 1)] += 1;
  double s = 0, sq = 0, k = 0;
  for (int i = first; i < windows; i += step) {
    s += n[i];
    sq += n[i] * n[i];
    k += 1;
  }
  const double mean = s / k;
  return {mean, (sq / k - mean * mean) * k / (k - 1) / mean};
}

}  // namespace

TEST_CASE("a moving rate's streams: each rate's mean count and the counts' dispersion, Poisson and gamma within",
          "[sim][arrivals][modulated]") {
  const int pairs = 2000;  // 2,000 high and 2,000 low seconds
  const auto segs = alternating(80, 20, pairs);
  struct Case {
    ArrivalProcess process;
    double cv2;  // the count's index of dispersion over long windows: the gaps' CV^2 (0 evenly spaced)
  };
  for (const Case c : {Case{ArrivalProcess{}, 1}, Case{ArrivalProcess::gamma(4), 4},
                       Case{ArrivalProcess::gamma(0.25), 0.25}, Case{ArrivalProcess::uniform(), 0}}) {
    INFO("CV^2 " << c.cv2 << " kind " << static_cast<int>(c.process.kind));
    RateArrivals a(segs, c.process, 11);
    const auto t = drain(a);
    const Stats hi = window_counts(t, 2 * pairs, 0), lo = window_counts(t, 2 * pairs, 1);
    // Mean count per second at each rate: the standard error of a mean over
    // 2,000 windows is sqrt(CV^2 x rate / 2000) (0.2 at 80 QPS Poisson and
    // at 20 QPS gamma:4); 4 of them, and at least 0.05 for the evenly
    // spaced stream. A renewal restarted at each change is +1.5 (gamma:4)
    // and -0.375 (gamma:0.25) per second at 20 QPS: 7.5 standard errors.
    const double se_hi = std::sqrt(std::max(c.cv2, 0.01) * 80 / pairs);
    const double se_lo = std::sqrt(std::max(c.cv2, 0.01) * 20 / pairs);
    CHECK(std::abs(hi.mean - 80) < std::max(4 * se_hi, 0.05));
    CHECK(std::abs(lo.mean - 20) < std::max(4 * se_lo, 0.05));
    // Index of dispersion over 1 s windows: CV^2, less the renewal's
    // finite-window term (1 - CV^4) / 12 / mean count (-0.016 at 80 for
    // gamma:4); the standard error of a sample variance over 1,000
    // windows is about sqrt(2 / 2000) = 3.2% of it: 15% allowed (4.7 s.e.).
    // Evenly spaced arrivals: 80 or 81 a second, an index near 0.
    if (c.cv2 > 0) {
      CHECK(hi.idc == Approx(c.cv2).epsilon(0.15));
      CHECK(lo.idc == Approx(c.cv2 + (1 - c.cv2 * c.cv2) / 12 / 20).epsilon(0.15));
    } else {
      CHECK(hi.idc < 0.05);
      CHECK(lo.idc < 0.05);
    }
    // Over 2 s windows (one of each rate) the rate does not move: the
    // count's index is the short-range one again, not the modulation's
    // (which alone would give 1 + 30^2 / 50 = 19 for Poisson).
    std::vector<std::int64_t> shifted;  // windows [2i, 2i + 2) as 1 s windows of a stream at half time
    for (auto x : t) shifted.push_back(x / 2);
    const Stats both = window_counts(shifted, pairs, 0, 1);
    CHECK(both.mean == Approx(100).epsilon(4 * std::sqrt(std::max(c.cv2, 0.01) * 100 / pairs) / 100));
    if (c.cv2 > 0) CHECK(both.idc == Approx(c.cv2).epsilon(0.15));
  }
}

TEST_CASE("a moving rate's stream is reproducible from its seed, and a rate of 0 passes a gamma gap on",
          "[sim][arrivals][modulated]") {
  const auto segs = alternating(50, 5, 50);
  RateArrivals a(segs, ArrivalProcess::gamma(4), 5), b(segs, ArrivalProcess::gamma(4), 5),
      c(segs, ArrivalProcess::gamma(4), 6);
  const auto ta = drain(a);
  CHECK(drain(b) == ta);
  CHECK(drain(c) != ta);
  // Seconds of rate 0 between seconds of 40 QPS: no arrival in them, and
  // the mean over the others stays 40 (a gap's remainder is carried over
  // the silent second, not dropped or restarted).
  std::vector<RateSegment> gaps;
  for (int i = 0; i < 8000; ++i) gaps.push_back({double(i), double(i + 1), i % 2 == 0 ? 40.0 : 0.0});
  RateArrivals g(gaps, ArrivalProcess::gamma(4), 9);
  const auto tg = drain(g);
  const Stats on = window_counts(tg, 8000, 0), off = window_counts(tg, 8000, 1);
  CHECK(off.mean == 0);
  // 4 standard errors, 0.8; restarting each second would be +1.5.
  CHECK(std::abs(on.mean - 40) < 4 * std::sqrt(4.0 * 40 / 4000));
}
