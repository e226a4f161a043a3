#pragma once
// Which compiled arrival pattern serves the estimated one (
// docs/solver.md "The runtime sees the pattern"). Rule: the smallest
// compiled burstiness at or above the estimate, within a tolerance that the
// estimator's noise justifies, among the estimated family's patterns (and
// Poisson); if that family has none, any family's. Hysteresis, so that the
// choice does not flap on the estimate's noise:
//   up    as soon as the estimate exceeds the current pattern's burstiness
//         by more than the tolerance;
//   down  only once the estimate is at or below the lower pattern's own
//         burstiness (no tolerance).
// An estimate beyond every compiled pattern (by the tolerance) is "beyond the
// library": with `compile_beyond`, the pattern to compile and serve is the
// estimate's family at the burstiness (less the tolerance) rounded up to a
// power of two (few compilations; gamma:4 traffic read as 4.6 compiles
// gamma:4); without, the most bursty compiled pattern.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/burstiness_estimator.h"
#include "schema/arrival_process.h"

namespace lull::core {

class PatternSwitcher {
 public:
  // Relative tolerance: docs/solver.md measures the estimate's 5-95%
  // spread at the default window within about +-20% (gamma:8, batch:8).
  static constexpr double kDefaultTolerance = 0.25;
  explicit PatternSwitcher(bool compile_beyond = false, double tolerance = kDefaultTolerance);

  // `compiled`: the patterns held (any order, at least one). Returns the
  // pattern to serve now; an estimate not yet ready keeps the current one
  // (at first, the least bursty compiled).
  const ArrivalProcess& update(const BurstinessEstimate& estimate, const std::vector<ArrivalProcess>& compiled);
  const ArrivalProcess& current() const { return current_; }
  // The last ready estimate was beyond the library; `beyond_events` counts
  // each time it went there.
  bool beyond() const { return beyond_; }
  int beyond_events() const { return beyond_events_; }
  int switches() const { return switches_; }

 private:
  ArrivalProcess current_;
  bool started_ = false;
  bool compile_beyond_;
  double tolerance_;
  bool beyond_ = false;
  int beyond_events_ = 0;
  int switches_ = 0;
};

// The index of the smallest burstiness in `compiled` covering `wanted` (at
// or above its burstiness / (1 + tolerance); the same family or Poisson
// first, then any family), else of the most bursty: how a worker count's
// sets are chosen for a pattern. `get(compiled[i])` is the i-th process.
// Requires !compiled.empty().
template <class Range, class Get>
std::size_t covering_pattern(const Range& compiled, Get get, const ArrivalProcess& wanted, double tolerance = 0) {
  const double need = wanted.burstiness() / (1 + tolerance);
  const std::size_t n = compiled.size();
  std::size_t best = n, best_any = n, top = 0;
  auto b = [&](std::size_t i) { return get(compiled[i]).burstiness(); };
  for (std::size_t i = 0; i < n; ++i) {
    const ArrivalProcess& p = get(compiled[i]);
    if (b(i) > b(top)) top = i;
    if (b(i) < need) continue;
    if (best_any == n || b(i) < b(best_any)) best_any = i;
    const bool family = p.is_poisson() || wanted.is_poisson() || p.kind == wanted.kind;
    if (family && (best == n || b(i) < b(best))) best = i;
  }
  return best < n ? best : best_any < n ? best_any : top;
}

inline std::size_t covering_pattern(const std::vector<ArrivalProcess>& compiled, const ArrivalProcess& wanted,
                                    double tolerance = 0) {
  return covering_pattern(
      compiled, [](const ArrivalProcess& p) -> const ArrivalProcess& { return p; }, wanted, tolerance);
}

}  // namespace lull::core
