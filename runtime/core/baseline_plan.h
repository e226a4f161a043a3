#pragma once
// The baselines of the RAMSIS paper (section 7), with the exact rules of
// mdp-spec section 8 (the reference simulator's): each decides one
// (model, maximum batch) per load grid point. This file holds the rules that
// need only the latency table: the feasible batch, Jellyfish+'s plan and
// ModelSwitching's batch cap. ModelSwitching's model choice needs
// simulations (runtime/sim/model_switching.h).
#include <vector>

#include "runtime/core/policy_table.h"

namespace lull::core {

struct BaselineChoice {
  int model = 0;
  int max_batch = 1;
};

// Jellyfish+'s headroom on the per-worker load (spec 8); the feasible batch
// of ModelSwitching's cap uses 1.0.
inline constexpr double kJellyfishHeadroom = 1.05;

// N: the largest batch the baselines consider (the table covers 1..N+1).
int baseline_batch_limit(const PolicyTable& table);

// The fastest model (least lat(m, 1)); model 0 in a table ordered as spec 1.1.
int fastest_model(const PolicyTable& table);

// Feasible batch: the largest b in 1..N with lat(m,b) <= SLO/2 and
// b / lat(m,b) >= factor * load/K, or 0 when no batch qualifies.
int feasible_batch(const PolicyTable& table, int model, double load_qps, double factor = 1.0);

// Jellyfish+, per compiled load: the most accurate model with a feasible
// batch at factor 1.05, capped at its largest such batch; if no model has
// one, the fastest model with cap N.
std::vector<BaselineChoice> jellyfish_plan(const PolicyTable& table);

// ModelSwitching's batch cap at a load, whatever its static model: the
// feasible batch (factor 1.0) of the most accurate model that has one; N if
// none has. At overload the cap is N, so a backlog drains.
int model_switching_cap(const PolicyTable& table, double load_qps);

}  // namespace lull::core
