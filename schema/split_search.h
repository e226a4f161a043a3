#pragma once
// The split of one SLO class's arrivals over its worker kinds (docs/operators-guide.md):
// arrivals go to kind k at random with weight w_k, so kind k sees Poisson at
// w_k * load and its compiled expectation holds for it exactly. The class's
// expectation is the mix, and the search picks, on a grid of weights, the
// split with the highest expected accuracy whose violation meets the target
// (when none does: the least violation). Pure arithmetic over expectations,
// so lull compile --fleet searches with it over the compiler's and the
// runtime re-searches with it over the fleet file's, for the counts up.
#include <functional>
#include <vector>

namespace lull {

// A policy's expectation (the compiler's, or as a library records it).
struct Expectation {
  double accuracy = 0;           // per satisfied query (fraction)
  double violation_rate = 0;     // fraction of served queries
  bool beyond_capacity = false;  // the fastest model cannot keep up: never planned
  double compile_s = 0;          // host seconds its policy took to compile (the cost at that count)
};

// What a plan (or a split) must meet.
struct PlanTarget {
  double max_violation = 0.01;  // expected violation rate, in (0, 1)
  double min_accuracy = 0;      // expected accuracy, 0 or in (0, 1)
};

bool meets(const Expectation& e, const PlanTarget& target);

// A grid of weights: every way of giving `kinds` kinds multiples of 1/steps
// that sum to 1 (steps = 1 / --weight-step), all on kind 0 first. Each weight
// is s / steps, computed here only, so the loads compiled for a grid and the
// loads looked up for it are the same numbers.
// Throws std::invalid_argument naming --weight-step for more than
// kMaxWeightSplits splits (many kinds at a fine step).
inline constexpr double kMaxWeightSplits = 1e6;
std::vector<std::vector<double>> weight_grid(int kinds, int steps);

// Steps for a weight step: 1/step when that is a whole number in 1..1000.
// Throws std::invalid_argument naming --weight-step otherwise.
int weight_steps(double weight_step);

// The load a kind sees at weight w of the class load (the one formula, so the
// loads compiled and the loads looked up are equal).
inline double kind_load(double class_load_qps, double weight) { return class_load_qps * weight; }

// The class's expectation at weights w (sum 1) from each kind's own:
// violation sum w_k v_k, accuracy sum w_k (1 - v_k) a_k / sum w_k (1 - v_k);
// beyond capacity when a kind with weight > 0 is. Kinds with w_k = 0 are ignored.
Expectation mix_expectation(const std::vector<double>& weights, const std::vector<Expectation>& kinds);

struct ClassSplit {
  std::vector<double> weights;  // one per kind, summing to 1
  Expectation expected;         // the class's
  bool meets = false;           // violation (and accuracy floor) met
};

// The kind's expectation at a load (the compiled one).
using KindExpectation = std::function<Expectation(int kind, double load_qps)>;

// The best split of `grid` at a class load: among splits within capacity
// that meet the target, the highest accuracy (ties: lower violation, then
// grid order); when none meets it, the least violation among splits within
// capacity; when every split is beyond capacity, the least violation.
ClassSplit best_split(const std::vector<std::vector<double>>& grid, double class_load_qps, const PlanTarget& target,
                      const KindExpectation& expectation);

// The split at given weights (a grid entry, or the file's fixed weights).
ClassSplit split_at(const std::vector<double>& weights, double class_load_qps, const PlanTarget& target,
                    const KindExpectation& expectation);

// The weights that put everything on one kind.
std::vector<double> alone_weights(int kinds, int kind);

}  // namespace lull
