#pragma once
// `lull plan --arrivals tracked:FILE --load-qps L`: the fewest workers whose
// policy library over loads meets the target on the file's rates scaled to a
// mean of L (docs/user-guide.md, "Traffic whose rate moves"). A count meets
// it when the mixture of its per-load expectations over the runtime's load
// estimates (compiler::served_mixture) does: the count is set by the rates
// the trace spends its queries at, not by the mean.
#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/arrival_fit.h"
#include "compiler/plan/expectation_cache.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {

struct TrackedPlan {
  int workers = 0;
  LoadExpectation expected;                            // the mixture at `workers`
  LoadExpectation one_fewer;                           // at workers - 1 (workers 1: none)
  double grid_step_qps = 0;                            // the policy grid the mixture assumes
  double capacity_qps = 0;                             // the highest grid load `workers` meet the target at, from below
  double capacity_quantile = 0;                        // the share of queries whose load estimate is at or below it
  std::vector<std::pair<int, LoadExpectation>> tried;  // every count evaluated, ascending
  bool lagged = false;                                 // counts judged with the lag term (TrackedLag)
  LoadExpectation estimate_only;                       // lagged: the mixture without the lag at `workers`
};

// `lull plan --arrivals tracked:FILE --expect-lag on`: each count judged by
// the lag term (compiler/lagged_mixture.h) instead of served_mixture: its
// library over the grid loads compiled with `solver`, each policy evaluated
// at the rate around the queries it serves. The short-range pattern's count
// dispersion shrinks the rate's noise (served_load_pairs).
// With `transient` (--expect-lag transient), each count's library is judged
// by transient_expectation (compiler/transient_expectation.h) on the scaled
// trace instead.
struct TrackedLag {
  Solver* solver = nullptr;
  double count_dispersion = 1;
  bool transient = false;
  bool late = false;  // --expect-late on: a missing batch counts its late queries (lagged_mixture.h)
};

// The cache's spec holds the short-range pattern. `times_us` is the trace
// (its mean rate `trace_qps`), scaled to `load_qps`. Throws PlanError when
// no count up to max_workers meets the target.
// With `lag`, the counts are judged by the lag term; capacity_qps and
// capacity_quantile stay the compiled expectations' at the count chosen.
TrackedPlan plan_tracked(ExpectationCache& cache, const std::vector<std::int64_t>& times_us, double trace_qps,
                         double load_qps, const PlanTarget& target, int max_workers, const TrackedLag* lag = nullptr);

}  // namespace lull::compiler
