#pragma once
// The baselines of the RAMSIS paper (section 7) decide one (model, maximum
// batch) per load grid point. This file computes Jellyfish+'s plan from the
// latency table alone; ModelSwitching's needs simulations (runtime/sim/).
#include <vector>

#include "runtime/policy_table.h"

namespace lull::runtime {

struct BaselineChoice {
  int model = 0;
  int max_batch = 1;
};

// Largest batch b in 1..N with b / lat(m,b) >= 1.05 * load/K and
// lat(m,b) <= SLO/2, or 0 when no batch qualifies.
int jellyfish_max_batch(const PolicyTable& table, int model, double load_qps);

// For each compiled load: the most accurate model with a qualifying batch and
// its largest such batch; if none qualifies, model 0 with the largest batch N.
std::vector<BaselineChoice> jellyfish_plan(const PolicyTable& table);

// N: the largest batch the baselines consider (the table covers 1..N+1).
int baseline_batch_limit(const PolicyTable& table);

}  // namespace lull::runtime
