// SplitArrivals: the groups of a random split partition one stream, each
// group gets its weight's share, and weights that change with time apply
// from their segment on (docs/operators-guide.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "runtime/sim/fleet_sim.h"
#include "test/support/runtime_test_support.h"

namespace {

using namespace lull::sim;
using lull::test::drain;

std::vector<std::int64_t> group_times(const std::vector<std::vector<double>>& weights_by_segment,
                                      const std::vector<RateSegment>& segments, std::size_t group) {
  auto at = [&](std::int64_t t_us) -> const std::vector<double>& {
    for (std::size_t i = segments.size(); i-- > 0;)
      if (static_cast<double>(t_us) >= segments[i].start_s * 1e6) return weights_by_segment[i];
    return weights_by_segment[0];
  };
  SplitArrivals split(std::make_unique<RateArrivals>(segments, ArrivalProcess{}, 11), at, group, 99);
  return drain(split);
}

}  // namespace

TEST_CASE("a random split partitions one stream by weight", "[sim][arrivals][fleet]") {
  const std::vector<RateSegment> segments = {{0, 20, 1000}};
  const std::vector<std::vector<double>> w = {{0.2, 0.5, 0.3}};
  RateArrivals whole(segments, ArrivalProcess{}, 11);
  const auto all = drain(whole);
  std::vector<std::int64_t> merged;
  for (std::size_t g = 0; g < 3; ++g) {
    const auto times = group_times(w, segments, g);
    // Binomial share: 4 standard deviations.
    const double n = static_cast<double>(all.size()), expect = w[0][g] * n;
    CHECK(std::abs(static_cast<double>(times.size()) - expect) < 4 * std::sqrt(expect * (1 - w[0][g])));
    CHECK(times == group_times(w, segments, g));  // reproducible
    merged.insert(merged.end(), times.begin(), times.end());
  }
  std::sort(merged.begin(), merged.end());
  CHECK(merged == all);  // every arrival in exactly one group
}

TEST_CASE("split weights follow the segment an arrival falls in", "[sim][arrivals][fleet]") {
  // All to group 0 for 10 s, then all to group 1.
  const std::vector<RateSegment> segments = {{0, 10, 500}, {10, 20, 500}};
  const std::vector<std::vector<double>> w = {{1, 0}, {0, 1}};
  const auto first = group_times(w, segments, 0), second = group_times(w, segments, 1);
  REQUIRE_FALSE(first.empty());
  REQUIRE_FALSE(second.empty());
  CHECK(first.back() < 10'000'000);
  CHECK(second.front() >= 10'000'000);
}
