// The reference replay of a rate file (mdp-spec section 8): per-second rates,
// the last line lasting 1 s, 300 s with wrap-around, and the end rule; on the
// artifact's Twitter file, about 792,000 queries.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "runtime/sim/trace_spec.h"
#include "test/support/runtime_test_support.h"

using namespace lull::sim;
using Catch::Matchers::Contains;

namespace {

// The rate in force at time t (seconds) in a list of segments.
double rate_at(const std::vector<RateSegment>& segs, double t) {
  for (const auto& s : segs)
    if (s.start_s <= t && t < s.end_s) return s.qps;
  return -1;
}

double expected_queries(const std::vector<RateSegment>& segs) {
  double n = 0;
  for (const auto& s : segs) n += s.qps * (s.end_s - s.start_s);
  return n;
}

}  // namespace

TEST_CASE("reference replay: each second takes its line, the last line lasts 1 s, then it wraps", "[sim][trace]") {
  // Lines at 0, 10, 20: seconds 0..9 at 100, 10..19 at 200, 20 at 50; period 21 s.
  const std::vector<RateSegment> lines = {{0, 10, 100}, {10, 20, 200}, {20, 30, 50}};
  const auto segs = reference_replay_segments(lines, 300);
  CHECK(segs.front().start_s == 0);
  CHECK(segs.back().end_s == 300);
  for (std::size_t i = 1; i < segs.size(); ++i) CHECK(segs[i].start_s == segs[i - 1].end_s);
  CHECK(rate_at(segs, 9.5) == 100);
  CHECK(rate_at(segs, 10.0) == 200);
  CHECK(rate_at(segs, 20.5) == 50);    // the last line: one second
  CHECK(rate_at(segs, 21.0) == 100);   // wraps: second 21 is second 0
  CHECK(rate_at(segs, 41.5) == 50);    // second 41 = 20 mod 21
  CHECK(rate_at(segs, 299.5) == 100);  // 299 mod 21 = 5
  // 14 periods of 10*100 + 10*200 + 50, then seconds 0..5 at 100.
  CHECK(expected_queries(segs) == 14 * 3050 + 6 * 100);
  // Equal neighbouring seconds are one segment: 3 per period, 14 periods, 1 tail.
  CHECK(segs.size() == 14 * 3 + 1);
}

TEST_CASE("reference replay: seconds before the first line have rate 0 and short runs cut the table", "[sim][trace]") {
  const auto segs = reference_replay_segments({{2, 5, 30}, {5, 6, 60}}, 10.5);
  // Seconds 0..5: 0, 0, 30, 30, 30, 60; period 6.
  CHECK(rate_at(segs, 1.5) == 0);
  CHECK(rate_at(segs, 2.0) == 30);
  CHECK(rate_at(segs, 5.5) == 60);
  CHECK(rate_at(segs, 6.5) == 0);
  CHECK(rate_at(segs, 10.2) == 30);  // second 10 = 4 mod 6
  CHECK(segs.back().end_s == 10.5);
  CHECK(expected_queries(segs) == Approx(90 + 60 + 0 + 60 + 15));
}

TEST_CASE("replay modes, the end of run, and what is refused", "[sim][trace]") {
  TraceSpec hold = parse_trace_spec("rate-file:/x.txt");
  CHECK(hold.replay == ReplayMode::kHold);
  CHECK(trace_dispatch_end_s(hold) == 0);  // serve every query
  TraceSpec ref = hold;
  set_replay_mode(&ref, "reference");
  CHECK(ref.replay == ReplayMode::kReference);
  CHECK(trace_dispatch_end_s(ref) == 300);
  TraceSpec c = parse_trace_spec("constant:100:30");
  set_replay_mode(&c, "reference");
  CHECK(trace_dispatch_end_s(c) == 30);
  TraceSpec a = parse_trace_spec("arrivals:/y.txt");
  CHECK_THROWS_WITH(set_replay_mode(&a, "reference"), Contains("arrivals"));
  CHECK_THROWS_WITH(set_replay_mode(&c, "twice"), Contains("expected hold or reference"));
}

TEST_CASE("reference replay of the artifact's Twitter file gives about 792,000 queries", "[sim][trace]") {
  const std::string path = lull::test::shared_dir() + "/ramsis-artifact/twitter_04_25_norm.txt";
  LULL_REQUIRE_SHARED_DATA(std::filesystem::exists(path), "ramsis-artifact/twitter_04_25_norm.txt");
  TraceSpec spec = parse_trace_spec("rate-file:" + path);
  set_replay_mode(&spec, "reference");
  const double mean = expected_queries(reference_replay_segments(read_rate_file(path), 300));
  CHECK(mean == 791'796);  // 27 lines, seconds 0..260, 300 s wrapping to second 38
  const auto src = make_arrival_source(spec, ArrivalProcess{}, 1);
  const auto times = lull::test::drain(*src);
  // Poisson: sd = sqrt(mean) ~ 890; allow 5 sd.
  CHECK(std::abs(static_cast<double>(times.size()) - mean) <= 5 * std::sqrt(mean));
  CHECK(times.back() < 300'000'000);
}
