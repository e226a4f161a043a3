// A class's split re-searched for the worker counts up (runtime/core/fleet_split.h):
// the weights follow the counts, the file's stay where the library lacks one.
#include <catch2/catch.hpp>

#include "runtime/core/fleet_split.h"
#include "test/support/fleet_split_fixture.h"

using namespace lull;

namespace {

core::FleetClassTables two_kinds(const std::vector<double>& loads) { return test::split_fixture_class(loads); }

}  // namespace

TEST_CASE("fleet split: re-searched for the counts up", "[runtime][fleet]") {
  const auto cls = two_kinds({25, 50, 75, 100});
  CHECK(core::compiled_weight_steps(cls) == 4);
  // The file's counts: the file's split.
  auto r = core::resplit_for_counts(cls, {1, 1});
  CHECK_FALSE(r.searched);
  CHECK(r.fallback.empty());
  CHECK(r.splits[0].weights == std::vector<double>{0.5, 0.5});
  // b scaled to 3 workers: it takes 3/4 of the load (25 qps a worker on both),
  // more accurate than the file's 50/50 on those counts (a at 50 a worker:
  // 0.8, b at 16.7: 0.867, the mix 0.833).
  r = core::resplit_for_counts(cls, {1, 3});
  CHECK(r.searched);
  CHECK(r.splits[0].weights == std::vector<double>{0.25, 0.75});
  CHECK(r.splits[0].accuracy == Approx(0.85));
  CHECK(r.splits[0].violation_rate == Approx(0.0025));
  // The file's 50/50 on these counts: a at 50 a worker (0.8), b at 16.7 (0.867).
  CHECK(r.file_weights[0].accuracy == Approx(0.8334).epsilon(0.001));
  CHECK(r.file_weights[0].accuracy < r.splits[0].accuracy);
  // a's worker ejected: everything on b.
  r = core::resplit_for_counts(cls, {0, 1});
  CHECK(r.splits[0].weights == std::vector<double>{0.0, 1.0});
}

TEST_CASE("fleet split: the file's weights where the library lacks the count or the grid", "[runtime][fleet]") {
  auto r = core::resplit_for_counts(two_kinds({25, 50, 75, 100}), {1, 5});
  CHECK_FALSE(r.searched);
  CHECK(r.fallback.find("kind 'b' has no policies for 5 workers") != std::string::npos);
  CHECK(r.splits[0].weights == std::vector<double>{0.5, 0.5});
  // Fixed weights: only the loads 50/50 sends were compiled, no grid to search.
  r = core::resplit_for_counts(two_kinds({50}), {1, 3});
  CHECK_FALSE(r.searched);
  CHECK(r.fallback.find("fixed") != std::string::npos);
  CHECK(r.splits[0].weights == std::vector<double>{0.5, 0.5});
}
