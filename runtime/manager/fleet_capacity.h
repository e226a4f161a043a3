#pragma once
// The autoscaler's capacity numbers for a mixed fleet (docs/operators-guide.md): one
// CapacityTable per (class, kind) group, from the kind's library in the fleet
// file and the class's violation target, the same numbers lull plan and
// lull compile --fleet use. A group is sized for the load its weight sends
// it: the class's split at the class load (FleetClassTables::split_at), w_k
// x load for kind k. The weights stay those the file chose; a group scaled
// away from its compiled count keeps them (the split is not re-searched).
#include <vector>

#include "runtime/core/fleet_tables.h"
#include "runtime/manager/capacity_table.h"

namespace lull::manager {

struct FleetGroupNeed {
  double load_qps = 0;  // the group's: weight x class load
  int workers = 0;      // 0 when its weight is 0
  bool enough = true;   // false when no compiled count of the kind covers the load
};

// A group's autoscaler target: the autoscaler's settings (objective, price,
// accuracy floor) with its class's violation target, so every group of a
// class is sized by the number lull compile --fleet and lull plan --fleet used.
CapacityTarget group_target(const CapacityTarget& base, const core::FleetClassTables& cls);

class FleetCapacity {
 public:
  // Throws std::invalid_argument (CapacityTable's) for a kind with an empty library.
  // `base`: as group_target's.
  explicit FleetCapacity(const core::FleetTables& fleet, const CapacityTarget& base = {});

  // Per kind of class `cls` (its order in the file): the workers its share of
  // `class_load_qps` needs (CapacityTable::workers_for).
  std::vector<FleetGroupNeed> workers_for(int cls, double class_load_qps) const;
  const CapacityTable& table(int cls, int kind) const;

 private:
  std::vector<core::FleetClassTables> classes_;     // the splits, by class
  std::vector<std::vector<CapacityTable>> tables_;  // [class][kind]
};

}  // namespace lull::manager
