#pragma once
// ModelSwitching (RAMSIS paper, section 7): offline, for each compiled load
// and model, simulate the central FIFO scheduler serving only that model (its
// batch cap chosen as for Jellyfish+) and record the 99th-percentile response
// latency; online, use the most accurate model whose p99 at the load's grid
// point meets the SLO, else model 0.
#include <vector>

#include "runtime/baseline_plan.h"
#include "runtime/policy_table.h"
#include "runtime/sim/latency_model.h"

namespace lull::sim {

struct SimOptions;

// The batch cap for `model` at `load_qps`: Jellyfish+'s rule; when no batch
// meets it, the largest batch within SLO/2 (at least 1).
int model_switching_batch_cap(const runtime::PolicyTable& table, int model, double load_qps);

// Runs the offline simulations (Poisson at each compiled load, for
// options.model_switching_profile_s seconds, seeded from options.seed). Models
// are tried from the most accurate down and the first whose p99 meets the SLO
// wins, which yields the same plan as recording every p99 first.
std::vector<runtime::BaselineChoice> model_switching_plan(const runtime::PolicyTable& table, LatencyModel& latency,
                                                          const SimOptions& options);

}  // namespace lull::sim
