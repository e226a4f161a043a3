#pragma once
// The adaptive load grid (paper section 6): instead of a fixed list, start
// from the two ends of a range and bisect every interval whose end policies'
// expected accuracies differ by more than a gap (1 point), so loads are dense
// where accuracy changes fast and sparse where it does not.
#include "compiler/compile_sweep.h"

namespace lull::compiler {

struct AdaptiveLoads {
  double lo_qps = 0;
  double hi_qps = 0;
  double max_accuracy_gap = 0.01;  // 1 point, as a fraction
  double min_step_qps = 1;         // an interval this narrow is not split further
};

struct AdaptiveSweep {
  SweepResult sweep;  // every load compiled, ascending
  int rounds = 0;     // bisection rounds (each compiles its new loads in parallel)
};

// Throws std::invalid_argument naming --load-qps for lo <= 0 or hi <= lo.
void validate_adaptive_loads(const AdaptiveLoads& grid);

// Compiles request.spec with the loads the grid needs (request.spec.loads_qps
// is ignored); `progress` sees every load as it is compiled.
AdaptiveSweep run_adaptive_sweep(const SweepRequest& request, const AdaptiveLoads& grid, Solver& solver,
                                 const SweepProgress& progress = nullptr);

}  // namespace lull::compiler
