#pragma once
// The JSON report of `lull simulate` on a fleet policy file: the fleet, each
// class (its kinds mixed, docs/operators-guide.md) and each (class, kind) group with
// the single-set report of result_json.h, simulated beside expected.
#include <string>

#include "runtime/sim/fleet_sim.h"
#include "runtime/sim/result_json.h"

namespace lull::sim {

std::string fleet_result_to_json(const FleetSimResult& r, const RunInfo& info);

}  // namespace lull::sim
