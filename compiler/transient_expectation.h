#pragma once
// `--expect-lag transient`: the expectation on a trace that follows one
// worker's queue through the trace in time instead of taking each
// (load estimate, rate) pair at its stationary distribution
// (lagged_mixture.h). A rate that jumps leaves a queue behind it while the
// trailing load estimate catches up; the stationary evaluation forgets that
// backlog the moment the estimate arrives (optimistic after short rises) and
// charges a short rise as if it lasted (pessimistic before long ones).
//
// The worker's state distribution p moves one decision at a time: at the
// worker's time t the runtime serves the policy of the load estimate read at
// the last arrival (the grid load at or above it), the transitions are the
// MDP's at the rate the service meets (served_load_series over a centred
// kTransientRateWindowUs, its noise shrunk toward the rate over 5 s, read
// half the last decision's mean service time ahead), and t advances by the expected time the decision takes: the
// chosen action's service time, plus the wait for the next query where the
// step leaves the queue empty ((K + c) / 2 gaps of the central rate, c the
// short-range process's squared CV: the mean residual of the worker's
// renewal gap). Every decision's served, late and accurate queries add up;
// all K workers are alike under round robin. Where the spec takes a state's
// earliest query at its cell's lowest slack T_j, the walk takes the cell as
// the runtime meets it: the query's age at the cell's middle when the phase
// of the next arrival is drawn (MdpOptions::age_mid_cell), and its late
// count over the cell (late_in_batch_in_cell). At constant overload (K = 20,
// 1,150 QPS Poisson, simulated 4.53%) the spec's account expects 5.58%,
// with the late count over the cell 5.30%, with both 4.67%.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "compiler/arrival_fit.h"
#include "compiler/compile_library.h"
#include "compiler/compile_spec.h"
#include "compiler/profile/model_table.h"

namespace lull::compiler {

// The rate's window: rate swings shorter than the 500 ms load window (a
// 1 s-state MMPP's short visits) are what the load estimate misses and the
// queue feels. Chosen on the modulated study (experiments/results/
// modulated-transient-2026-11-29.md): 100 ms beat 50, 200 and 500 ms.
inline constexpr std::int64_t kTransientRateWindowUs = 100'000;

// The late count's points over a cell (4 and 8 give the same figures).
inline constexpr int kLateCellPoints = 4;

// The heap the walk's MDPs, tables and steps may hold (measured as built);
// past it the rate met least recently is dropped and built again if the
// walk comes back to it. K = 60, 300 s MMPP file: peak RSS 398 -> 294 MB;
// a 1-hour diurnal file: 842 -> 657 MB (the trace's own arrays are most of
// the rest); the figures are the same.
inline constexpr std::size_t kTransientTableBudgetBytes = std::size_t{256} << 20;

struct TransientStats {
  long decisions = 0;            // steps of the worker's chain
  int rates = 0;                 // rate MDPs built (a rate built again after eviction counts again)
  int policies = 0;              // (policy, rate) steps built
  int evicted = 0;               // rate MDPs dropped for kTransientTableBudgetBytes
  double served_per_worker = 0;  // queries the chain served (compare: arrivals / K)
};

// `late`: a missing batch counts only its late queries (late_in_batch_in_cell),
// else all of them (mdp-spec section 6). load_qps: the mean load estimate
// over arrivals (as lagged_mixture's). Throws std::invalid_argument for
// fewer than two arrivals, a rate step <= 0 or a sweep without policies.
LoadExpectation transient_expectation(const ReducedProfiles& profiles, const CompileSpec& spec,
                                      const LibrarySweep& sweep, const std::vector<std::int64_t>& times_us,
                                      double rate_step_qps, double count_dispersion, bool late,
                                      TransientStats* stats = nullptr,
                                      std::size_t budget_bytes = kTransientTableBudgetBytes);

}  // namespace lull::compiler
