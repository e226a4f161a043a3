#pragma once
// lull plan --fleet: per SLO class, the cheapest mix of worker kinds and
// counts meeting the class's target at its share of a fleet load, beside
// what each kind alone would cost. Every number comes from the planner's own
// searches (worker_search.h) over each kind's expectation cache.
//
// The search: for each split w of the class's load on the weight grid
// (fleet_weights.h) and each kind k with w_k > 0, the fewest workers of k
// meeting the class's target at load w_k x load (fewest_workers_for_loads,
// one lockstep search per kind over every load the grid sends it); the
// split's cost is sum over kinds of workers x price_per_s, and the cheapest
// split wins (ties: the more accurate). Requiring each kind to meet the
// target on its own share is sufficient for the class (its violation and
// accuracy are weighted means of the kinds'), not necessary: a mix where one
// kind violates more and another less is not considered.
//
// With `served.on`, each kind of the cheapest mix (weight > 0) also gets a
// library at its count over served_load_grid around its share of the load
// (compile_library), and its share is served through the runtime's load
// estimate there (lagged_mixture.h's served_expectation_at); the choice is
// unchanged.
#include <functional>
#include <string>
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/fleet/fleet_compile.h"
#include "schema/split_search.h"
#include "compiler/solver/solver.h"
#include "schema/fleet_description.h"

namespace lull::compiler {

struct FleetMix {
  bool found = false;           // every kind with weight > 0 reaches the target within max_workers
  std::vector<double> weights;  // per candidate kind
  std::vector<int> workers;     // per candidate kind (0 where the weight is 0)
  double cost_per_s = 0;
  Expectation expected;  // the class's (mix_expectation)
};

// One kind of the cheapest mix served through its load estimate (--expect-lag on).
struct FleetServedKind {
  double load_qps = 0;           // its share of the class load, taken as the true one
  std::vector<double> grid_qps;  // the loads its library was compiled at (served_load_grid); empty: weight 0
  Expectation served;            // served_expectation_at the load, at the mix's count
};

struct FleetClassPlan {
  std::string name;
  double load_qps = 0;             // the class's: share x fleet load
  std::vector<std::string> kinds;  // the candidates: the class's workers' kinds, else every kind
  std::vector<double> prices;      // per candidate kind
  FleetMix cheapest;               // found = false when no split reaches the target
  std::vector<FleetMix> alone;     // per candidate kind: all of the load on it
  // --expect-lag on, the cheapest mix found: its weights and counts (chosen on
  // the compiled figures), each kind's expectation served through its 500 ms
  // load estimate, mixed as `cheapest.expected` is.
  bool has_served = false;
  Expectation served;
  bool served_meets = false;             // the class's target, on the served figure
  std::vector<FleetServedKind> by_kind;  // per candidate kind
};

struct FleetPlan {
  std::vector<FleetClassPlan> classes;
  std::size_t solves = 0;  // policies compiled
};

using FleetPlanProgress = std::function<void(const std::string& stage, std::size_t solves)>;

// `spec`: solver and reduction settings (inputs, SLO, workers and loads are the fleet's).
FleetPlan plan_fleet(const FleetDescription& fleet, const CompileSpec& spec, double fleet_load_qps, int weight_steps,
                     int max_workers, Solver& solver, const FleetPlanProgress& progress = nullptr,
                     FleetServed served = {});

}  // namespace lull::compiler
