// The weight search of a class's split over its kinds (schema/split_search):
// the grid, the mix formula, and the choice, on expectations made by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "schema/split_search.h"

using namespace lull;

TEST_CASE("the weight grid holds every split on the step, each summing to 1") {
  const auto two = weight_grid(2, 4);
  REQUIRE(two.size() == 5);
  CHECK(two.front() == std::vector<double>{1.0, 0.0});
  CHECK(two.back() == std::vector<double>{0.0, 1.0});
  const auto three = weight_grid(3, 20);
  CHECK(three.size() == 231);  // C(22, 2)
  for (const auto& w : three) CHECK(std::abs(w[0] + w[1] + w[2] - 1) < 1e-12);
  CHECK(weight_grid(1, 20) == std::vector<std::vector<double>>{{1.0}});
  // Ten kinds at 1/20: C(29, 9) = 10,015,005 splits, refused.
  CHECK_THROWS_WITH(weight_grid(10, 20), Catch::Contains("--weight-step") && Catch::Contains("10015005 splits"));
}

TEST_CASE("the weight step (--weight-step) must be 1/n") {
  CHECK(weight_steps(0.05) == 20);
  CHECK(weight_steps(0.1) == 10);
  CHECK(weight_steps(1) == 1);
  CHECK_THROWS_WITH(weight_steps(0.3), Catch::Contains("--weight-step"));
  CHECK_THROWS_WITH(weight_steps(0), Catch::Contains("--weight-step"));
  CHECK_THROWS_WITH(weight_steps(-0.5), Catch::Contains("--weight-step"));
  CHECK_THROWS_WITH(weight_steps(NAN), Catch::Contains("--weight-step"));
}

TEST_CASE("the class's expectation mixes the kinds' by weight, accuracy over satisfied queries") {
  const Expectation a{0.8, 0.10, false}, b{0.6, 0.0, false};
  const Expectation mix = mix_expectation({0.5, 0.5}, {a, b});
  CHECK(mix.violation_rate == Approx(0.05));
  // satisfied: 0.45 at 0.8, 0.5 at 0.6
  CHECK(mix.accuracy == Approx((0.45 * 0.8 + 0.5 * 0.6) / 0.95));
  CHECK_FALSE(mix.beyond_capacity);
  // A kind with weight 0 does not count, even beyond capacity.
  const Expectation beyond{0.9, 0.5, true};
  CHECK_FALSE(mix_expectation({1.0, 0.0}, {a, beyond}).beyond_capacity);
  CHECK(mix_expectation({0.9, 0.1}, {a, beyond}).beyond_capacity);
}

namespace {

// Kind 0: accurate, its violation rising with load (1% per 100 QPS);
// kind 1: less accurate, never violating, beyond capacity over 155 QPS.
Expectation made_up(int kind, double load) {
  if (kind == 0) return {0.8, load / 10000, false};
  return {0.6, 0.0, load > 155};
}

}  // namespace

TEST_CASE("the best split is the most accurate one meeting the target") {
  const PlanTarget target{0.01, 0};
  const auto grid = weight_grid(2, 20);
  // 200 QPS: kind 0 alone violates 2%; at weight w it sees 200 w QPS and
  // violates 200 w / 10000, the class w * that: w^2 * 0.02 <= 0.01 -> w <= 0.707.
  // The most weight on the accurate kind within that is 0.70; kind 1 then
  // sees 60 QPS (within its capacity).
  const ClassSplit best = best_split(grid, 200, target, made_up);
  CHECK(best.meets);
  CHECK(best.weights[0] == Approx(0.70));
  CHECK(best.expected.violation_rate == Approx(0.7 * 0.7 * 0.02));
  // Alone, neither kind is acceptable: kind 0 violates, kind 1 is beyond capacity.
  CHECK_FALSE(split_at(alone_weights(2, 0), 200, target, made_up).meets);
  CHECK(split_at(alone_weights(2, 1), 200, target, made_up).expected.beyond_capacity);
}

TEST_CASE("with no split meeting the target, the least violation within capacity") {
  const PlanTarget target{0.001, 0};
  // 1000 QPS: kind 1 can take at most 150 (w1 <= 0.15); kind 0's violation
  // w0^2 * 0.1 is least at w0 = 0.85.
  const ClassSplit best = best_split(weight_grid(2, 20), 1000, target, made_up);
  CHECK_FALSE(best.meets);
  CHECK_FALSE(best.expected.beyond_capacity);
  CHECK(best.weights[0] == Approx(0.85));
}

TEST_CASE("an accuracy floor is part of the target") {
  // 100 QPS: every split meets 1% violation; kind 0 alone is the most accurate.
  const ClassSplit met = best_split(weight_grid(2, 20), 100, {0.01, 0.79}, made_up);
  CHECK(met.meets);
  CHECK(met.weights[0] == 1.0);
  // A floor no split reaches: none meets, and the least violation (kind 1 alone) is chosen.
  const ClassSplit missed = best_split(weight_grid(2, 20), 100, {0.01, 0.85}, made_up);
  CHECK_FALSE(missed.meets);
  CHECK(missed.weights[1] == 1.0);
}

TEST_CASE("fixed weights are taken as given") {
  const ClassSplit s = split_at({0.5, 0.5}, 200, {0.01, 0}, made_up);
  CHECK(s.weights == std::vector<double>{0.5, 0.5});
  CHECK(s.expected.violation_rate == Approx(0.5 * 0.01));
  CHECK(s.meets);
}
