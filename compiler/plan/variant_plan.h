#pragma once
// `lull plan variants`: model variants from the plan. On a fixed
// number of workers K, a per-worker memory budget bounds which model sets a
// worker can hold; the load decides which of them serves best. For each load
// of a sweep this picks the set, groups consecutive loads with the same set
// into variants, and keeps each variant's policies (its set compiled at every
// load of the sweep, as `lull compile --models` would), ready for
// `lull serve --variant-sets`.
//
// The sets (why they must nest): `lull serve --variant-sets` starts with the
// first variant's models loaded and switches by loading and unloading within
// them, and every variant keeps model 0 (the fastest: the Dispatcher's
// fallback and retry model). So the candidates are the subsets that hold
// model 0 and fit the budget; the lowest load picks among all of them, and
// every higher load only among the subsets of the lowest load's set (the
// grouping adapts to what serving needs rather than failing on it).
//
// The pick at a load: of the candidates whose policy meets the target at K
// workers, the one with the highest expected accuracy (a tie: fewer models);
// when none meets it, the one with the lowest expected violation (the load is
// marked as not meeting the target). A set's policy over more models is
// never worse in the MDP's own objective, but it may buy accuracy with
// violations; under a violation target the smaller set wins at high load.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/compile_sweep.h"
#include "compiler/plan/expectation_cache.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {

struct VariantPlanRequest {
  CompileSpec spec;  // workers K in spec.mdp.workers; the sweep in spec.loads_qps
  PlanTarget target;
  double worker_memory_mb = 0;  // 0: every set fits
};

// The set one load picked.
struct LoadPick {
  double load_qps = 0;
  std::vector<int> models;  // indices into the profiles' models, ascending
  Expectation expected;
  bool meets_target = false;
};

// A run of consecutive loads with the same set.
struct VariantGroup {
  std::size_t first_load = 0;  // index into the sweep's loads
  std::vector<int> models;
};

struct PlannedVariant {
  double from_qps = 0;  // serves from here up (0 for the first)
  std::vector<int> models;
  double memory_mb = 0;  // the models' memory_mb sum
  SweepResult sweep;     // its set compiled at every load of the sweep
};

struct VariantPlan {
  std::vector<LoadPick> loads;  // ascending
  std::vector<PlannedVariant> variants;
  int candidates = 0;      // subsets tried at the lowest load
  std::size_t solves = 0;  // policies compiled
};

// Index of the candidate a load picks (the rule above), from each candidate's
// expectation at that load; `sizes` are the candidates' model counts.
std::size_t pick_candidate(const std::vector<Expectation>& expected, const std::vector<std::size_t>& sizes,
                           const PlanTarget& target);

// Runs of equal sets, in load order; the first group starts at load 0.
std::vector<VariantGroup> group_loads(const std::vector<std::vector<int>>& set_by_load);

// Throws std::invalid_argument naming the flag for bad input (the target, the
// loads, the budget). A load that no set meets is not an error: its pick is
// marked (meets_target false) and the caller says so.
VariantPlan plan_variants(const VariantPlanRequest& request, const ReducedProfiles& profiles, Solver& solver,
                          const std::function<void(const std::string& stage, std::size_t solves)>& progress = nullptr);

}  // namespace lull::compiler
