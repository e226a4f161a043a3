#include "schema/split_search.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "schema/expectation_mix.h"

namespace lull {
namespace {

void compositions(int kinds, int left, std::vector<int>& current, std::vector<std::vector<int>>& out) {
  if (static_cast<int>(current.size()) == kinds - 1) {
    current.push_back(left);
    out.push_back(current);
    current.pop_back();
    return;
  }
  // The first kind's weight descending, so the grid starts with "all on kind 0".
  for (int s = left; s >= 0; --s) {
    current.push_back(s);
    compositions(kinds, left - s, current, out);
    current.pop_back();
  }
}

// Better when it meets and the other does not; among two that meet, higher
// accuracy then lower violation; among two that do not, lower violation.
bool better(const ClassSplit& a, const ClassSplit& b) {
  if (a.expected.beyond_capacity != b.expected.beyond_capacity) return !a.expected.beyond_capacity;
  if (a.meets != b.meets) return a.meets;
  if (a.meets && a.expected.accuracy != b.expected.accuracy) return a.expected.accuracy > b.expected.accuracy;
  if (a.expected.violation_rate != b.expected.violation_rate)
    return a.expected.violation_rate < b.expected.violation_rate;
  return !a.meets && a.expected.accuracy > b.expected.accuracy;
}

}  // namespace

bool meets(const Expectation& e, const PlanTarget& target) {
  return !e.beyond_capacity && e.violation_rate <= target.max_violation && e.accuracy >= target.min_accuracy;
}

std::vector<std::vector<double>> weight_grid(int kinds, int steps) {
  if (kinds < 1 || steps < 1) throw std::invalid_argument("weight_grid: kinds and steps must be >= 1");
  // C(steps + kinds - 1, kinds - 1) splits: refuse a grid too large to search.
  double splits = 1;
  for (int i = 1; i < kinds; ++i) splits = splits * (steps + i) / i;
  if (splits > kMaxWeightSplits)
    throw std::invalid_argument("--weight-step: " + std::to_string(kinds) + " kinds at 1/" + std::to_string(steps) +
                                " make " + std::to_string(static_cast<long long>(splits)) + " splits (at most " +
                                std::to_string(static_cast<long long>(kMaxWeightSplits)) + "): take a coarser step");
  std::vector<std::vector<int>> counts;
  std::vector<int> current;
  compositions(kinds, steps, current, counts);
  std::vector<std::vector<double>> out;
  for (const auto& c : counts) {
    std::vector<double> w;
    for (int s : c) w.push_back(static_cast<double>(s) / steps);
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<double> alone_weights(int kinds, int kind) {
  std::vector<double> w(static_cast<std::size_t>(kinds), 0.0);
  w[static_cast<std::size_t>(kind)] = 1;
  return w;
}

int weight_steps(double weight_step) {
  const double n = 1 / weight_step;
  if (!(weight_step > 0 && weight_step <= 1) || std::abs(n - std::round(n)) > 1e-9 * n || std::round(n) > 1000)
    throw std::invalid_argument("--weight-step: must be 1/n for a whole n in 1..1000, e.g. 0.05 or 0.1 (got " +
                                std::to_string(weight_step) + ")");
  return static_cast<int>(std::round(n));
}

Expectation mix_expectation(const std::vector<double>& weights, const std::vector<Expectation>& kinds) {
  Expectation mix;
  ExpectationMix queries;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    if (weights[k] <= 0) continue;
    const Expectation& e = kinds[k];
    mix.beyond_capacity = mix.beyond_capacity || e.beyond_capacity;
    queries.add(weights[k], e.accuracy, e.violation_rate);
  }
  mix.violation_rate = queries.violation_rate();
  mix.accuracy = queries.accuracy();
  return mix;
}

ClassSplit split_at(const std::vector<double>& weights, double class_load_qps, const PlanTarget& target,
                    const KindExpectation& expectation) {
  ClassSplit s;
  s.weights = weights;
  std::vector<Expectation> kinds(weights.size());
  for (std::size_t k = 0; k < weights.size(); ++k)
    if (weights[k] > 0) kinds[k] = expectation(static_cast<int>(k), kind_load(class_load_qps, weights[k]));
  s.expected = mix_expectation(s.weights, kinds);
  s.meets = !s.expected.beyond_capacity && meets(s.expected, target);
  return s;
}

ClassSplit best_split(const std::vector<std::vector<double>>& grid, double class_load_qps, const PlanTarget& target,
                      const KindExpectation& expectation) {
  if (grid.empty()) throw std::invalid_argument("best_split: an empty grid");
  ClassSplit best = split_at(grid.front(), class_load_qps, target, expectation);
  for (std::size_t i = 1; i < grid.size(); ++i) {
    ClassSplit s = split_at(grid[i], class_load_qps, target, expectation);
    if (better(s, best)) best = std::move(s);
  }
  return best;
}

}  // namespace lull
