#pragma once
// What lull compile --fleet reports (a table per class: the chosen weights
// and the class's expectation per load, each kind alone beside them; the
// same as JSON for --report) and what lull policy show prints for a fleet
// policy file.
#include <string>
#include <vector>

#include "compiler/fleet/fleet_compile.h"
#include "compiler/fleet/fleet_plan.h"
#include "schema/policy.pb.h"

namespace lull::cli {

std::string fleet_compile_table(const schema::FleetPolicy& fleet,
                                const std::vector<compiler::FleetSplitReport>& splits);
std::string fleet_compile_json(const schema::FleetPolicy& fleet, const std::vector<compiler::FleetSplitReport>& splits);

// lull plan --fleet: per class the cheapest mix beside each kind alone, and
// the fleet's totals; the same as JSON for --out.
std::string fleet_plan_table(const compiler::FleetPlan& plan, double fleet_load_qps);
std::string fleet_plan_json(const compiler::FleetPlan& plan, double fleet_load_qps);

// The fleet description with each class's workers set to the plan's cheapest
// mix (kinds with no workers left out), paths absolute: lull compile --fleet
// reads it (plan --fleet-out). Throws std::runtime_error naming the class
// when a class has no mix meeting its target.
std::string planned_fleet_json(const FleetDescription& fleet, const compiler::FleetPlan& plan);

// `lull policy show` on a fleet policy file: classes, kinds, counts, prices,
// each kind's library in one line, and the weights by load.
std::string fleet_policy_summary(const std::string& path, const schema::FleetPolicy& fleet);

}  // namespace lull::cli
