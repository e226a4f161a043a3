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

namespace lull::compiler {

struct TrackedPlan {
  int workers = 0;
  LoadExpectation expected;                            // the mixture at `workers`
  LoadExpectation one_fewer;                           // at workers - 1 (workers 1: none)
  double grid_step_qps = 0;                            // the policy grid the mixture assumes
  double capacity_qps = 0;                             // the highest grid load `workers` meet the target at, from below
  double capacity_quantile = 0;                        // the share of queries whose load estimate is at or below it
  std::vector<std::pair<int, LoadExpectation>> tried;  // every count evaluated, ascending
};

// The cache's spec holds the short-range pattern. `times_us` is the trace
// (its mean rate `trace_qps`), scaled to `load_qps`. Throws PlanError when
// no count up to max_workers meets the target.
TrackedPlan plan_tracked(ExpectationCache& cache, const std::vector<std::int64_t>& times_us, double trace_qps,
                         double load_qps, const PlanTarget& target, int max_workers);

}  // namespace lull::compiler
