#pragma once
// ModelSwitching (RAMSIS paper, section 7) with the reference's rules
// (mdp-spec section 8): one static model per compiled load, served from the
// central FIFO queue with ModelSwitching's batch cap (runtime/core/baseline_plan.h).
// The model is chosen offline: each model alone is simulated at the grid
// point's constant load (Poisson, 300 s by default), and the most accurate
// model whose violation rate is below 1% wins; if none is, the fastest model.
#include <cstdint>
#include <vector>

#include "runtime/core/baseline_plan.h"
#include "runtime/core/policy_table.h"
#include "runtime/sim/latency_model.h"

namespace lull::sim {

struct SimOptions;

// The violation rate a model must stay below in its offline run.
inline constexpr double kModelSwitchingMaxViolation = 0.01;

// One offline run: `model` alone at the grid point's load.
struct OfflineTrial {
  int grid_point = 0;
  int model = 0;
  int max_batch = 0;
  std::uint64_t queries = 0;  // counted (dispatched before the run's end)
  double violation_rate = 0;
};

// The choice rule alone: `violation_rate[m]` is model m's offline violation
// rate (negative: not run). Returns the most accurate model below 1%, else the
// fastest model.
int model_switching_choice(const core::PolicyTable& table, const std::vector<double>& violation_rate);

// Runs the offline simulations (each options.model_switching_profile_s long,
// seeded from options.seed and the grid point) and returns the plan. Models
// are tried from the most accurate down and the first below 1% wins, which
// gives the same plan as running every model first. `trials`, if given,
// receives every run made.
std::vector<core::BaselineChoice> model_switching_plan(const core::PolicyTable& table, LatencyModel& latency,
                                                       const SimOptions& options,
                                                       std::vector<OfflineTrial>* trials = nullptr);

}  // namespace lull::sim
