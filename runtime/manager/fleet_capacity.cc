#include "runtime/manager/fleet_capacity.h"

namespace lull::manager {

CapacityTarget group_target(const CapacityTarget& base, const core::FleetClassTables& cls) {
  CapacityTarget t = base;
  t.max_violation_rate = cls.max_violation;
  return t;
}

FleetCapacity::FleetCapacity(const core::FleetTables& fleet, const CapacityTarget& base) : classes_(fleet.classes) {
  for (const auto& c : classes_) {
    std::vector<CapacityTable> kinds;
    for (const auto& k : c.kinds) kinds.emplace_back(k.library, group_target(base, c));
    tables_.push_back(std::move(kinds));
  }
}

std::vector<FleetGroupNeed> FleetCapacity::workers_for(int cls, double class_load_qps) const {
  const auto& c = classes_.at(static_cast<std::size_t>(cls));
  const auto& split = c.split_at(class_load_qps);
  std::vector<FleetGroupNeed> out;
  for (std::size_t k = 0; k < c.kinds.size(); ++k) {
    FleetGroupNeed need;
    need.load_qps = split.weights[k] * class_load_qps;
    if (split.weights[k] > 0)
      need.workers = tables_[static_cast<std::size_t>(cls)][k].workers_for(need.load_qps, &need.enough);
    out.push_back(need);
  }
  return out;
}

const CapacityTable& FleetCapacity::table(int cls, int kind) const {
  return tables_.at(static_cast<std::size_t>(cls)).at(static_cast<std::size_t>(kind));
}

}  // namespace lull::manager
