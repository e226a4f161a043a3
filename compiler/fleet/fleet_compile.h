#pragma once
// lull compile --fleet: for each SLO class and each of its worker kinds, the
// kind's policy library (its own profile, the class's SLO, its own worker
// count, at every load the weight grid sends it), compiled by the ordinary
// pipeline (compile_library); then, per class load, the split of the class's
// arrivals over the kinds (fleet_weights.h), all in one schema::FleetPolicy.
#include <functional>
#include <string>
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/compile_sweep.h"
#include "schema/split_search.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"
#include "schema/fleet_description.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

// One class's kinds, read and reduced alike: every kind has the same models
// (the union of their Pareto fronts unless `--models` names them).
struct FleetClassInputs {
  std::vector<int> kinds;                 // indices into FleetDescription::kinds, the class's workers order
  std::vector<ReducedProfiles> profiles;  // one per kind
  std::vector<CompileSpec> specs;         // one per kind: the class's SLO, the kind's count (loads unset)
};

// Reads each kind's profile for the class (spec: the solver and reduction
// settings; its inputs, SLO, workers and loads are the fleet's). Throws
// FleetDescriptionError("FLEET: classes[i] 'NAME'.workers.KIND: ...") for a
// kind whose profile lacks a model another kind of the class has; the
// profile readers' own errors name the profile file.
// `workers`: the kinds to read (and their counts; 0 for a count the planner chooses).
FleetClassInputs load_fleet_class_inputs(const FleetDescription& fleet, int class_index,
                                         const std::vector<FleetClassWorkers>& workers, const CompileSpec& spec);

struct FleetSplitReport {
  std::string class_name;
  double class_load_qps = 0;
  ClassSplit chosen;
  bool fixed = false;             // the file's weights, not searched
  std::vector<ClassSplit> alone;  // per kind: all of the class's load on that kind's workers
  bool has_served = false;        // FleetServed::on
  ClassSplit served;              // the chosen weights, each kind's expectation served through its load estimate
};

// `lull compile --fleet --expect-lag on` (and `lull plan --fleet`'s, fleet_plan.h): each kind's expectation at a load
// is also taken as served through the runtime's load estimate (lagged_mixture.h's served_expectations on the kind's own
// library), and each chosen split is reported with those (FleetSplitReport::served); the choice is unchanged.
struct FleetServed {
  bool on = false;
  bool late = false;  // --expect-late on
};

struct FleetCompileResult {
  schema::FleetPolicy policy;            // unsealed
  std::vector<FleetSplitReport> splits;  // per class, per load (ascending)
  int policies = 0;                      // compiled
};

// (class index, kind index within the class, loads done, loads of that kind, the last load's report)
using FleetProgress = std::function<void(int cls, int kind, int done, int total, const LoadReport& last)>;

// `fleet_loads_qps`: the fleet's loads (each class gets share x load),
// ascending and distinct. Each kind's library also holds sets for the counts
// within `count_spread` of its own (at least 1), at the same loads; the splits
// are chosen on the kind's own count. Throws std::invalid_argument for an
// empty load list or a negative spread.
FleetCompileResult compile_fleet(const FleetDescription& fleet, const CompileSpec& spec,
                                 const std::vector<double>& fleet_loads_qps, int weight_steps, Solver& solver,
                                 const FleetProgress& progress = nullptr, int count_spread = 0,
                                 FleetServed served = {});

}  // namespace lull::compiler
