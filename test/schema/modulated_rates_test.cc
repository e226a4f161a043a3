// Rates that move (schema/modulated_rates.h): an MMPP's two rates at the
// ratio asked with the mean kept, a sinusoid's pieces integrating to its
// mean, one error line per bad field; loadgen's schedule over the segments.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "cli/open_loop.h"
#include "schema/modulated_rates.h"

using lull::Modulation;

namespace {

double mean_rate(const std::vector<lull::RateSegment>& segs) {
  double area = 0;
  for (const auto& s : segs) area += s.qps * (s.end_s - s.start_s);
  return area / (segs.back().end_s - segs.front().start_s);
}

}  // namespace

TEST_CASE("modulated rates: MMPP states at the ratio with the mean kept, sinusoid pieces at their means",
          "[modulated]") {
  const auto m = lull::parse_modulation("mmpp:4:2", "--trace");
  const auto segs = lull::modulated_rate_segments(m, 100, 4000, 7);
  std::set<double> rates;
  for (const auto& s : segs) rates.insert(s.qps);
  REQUIRE(rates.size() == 2);
  CHECK(*rates.rbegin() == Approx(4 * *rates.begin()));
  CHECK(*rates.begin() == Approx(40));
  CHECK(mean_rate(segs) == Approx(100).epsilon(0.05));  // 2000 states: the mean within a few percent
  CHECK(segs.size() == Approx(2000).epsilon(0.1));
  CHECK(segs.front().start_s == 0);
  CHECK(segs.back().end_s == 4000);
  CHECK(lull::modulated_rate_segments(m, 100, 4000, 7).size() == segs.size());  // the seed decides
  CHECK(lull::modulated_rate_segments(m, 100, 4000, 8).size() != segs.size());

  const auto sin = lull::modulated_rate_segments(lull::parse_modulation("sinusoid:0.5:60", "--trace"), 300, 600, 3);
  CHECK(mean_rate(sin) == Approx(300).epsilon(1e-6));  // whole periods
  double lo = 1e9, hi = 0;
  for (const auto& s : sin) {
    lo = std::min(lo, s.qps);
    hi = std::max(hi, s.qps);
    CHECK(s.end_s - s.start_s <= 0.6 + 1e-9);
  }
  CHECK(lo == Approx(150).epsilon(0.01));
  CHECK(hi == Approx(450).epsilon(0.01));

  // loadgen's schedule follows the segments (the simulator's sampler).
  const auto at = lull::cli::arrival_schedule(lull::modulated_rate_segments(m, 100, 400, 9), lull::ArrivalProcess{}, 9);
  CHECK(static_cast<double>(at.size()) == Approx(40000).epsilon(0.15));
}

TEST_CASE("modulated rates: bad specs name the flag and the field", "[modulated]") {
  auto fails = [](const std::string& text, const std::string& needle) {
    INFO(text);
    try {
      lull::parse_modulation(text, "--modulation");
      FAIL("accepted " << text);
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("--modulation") != std::string::npos);
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  fails("mmpp:4", "mmpp:RATIO:STATE_S");
  fails("mmpp:0.5:1", "RATIO");
  fails("mmpp:4:0", "STATE_S");
  fails("mmpp:4:x", "STATE_S");
  fails("sinusoid:1.5:60", "AMPLITUDE");
  fails("sinusoid:0.5:0", "PERIOD_S");
  fails("square:1:2", "expected");
  CHECK_FALSE(lull::names_modulation("constant:1:2"));
  CHECK(lull::names_modulation("sinusoid:0.5:60"));
}
