#pragma once
// A mixed fleet as the runtime holds it (docs/operators-guide.md): SLO classes, each
// with its worker kinds (count, price, policy library at the kind's own
// loads) and the split of the class's arrivals over the kinds by load. The
// only place that reads the file is fleet_tables.cc (through schema/); every
// table in here has passed the same checks as a single policy library.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/policy_loader.h"
#include "runtime/core/policy_table.h"

namespace lull::schema {
class FleetPolicy;
}

namespace lull::core {

struct FleetKindTables {
  std::string kind;
  int workers = 0;
  double price_per_s = 0;
  std::vector<PolicyTable> library;  // ascending workers, as load_policy_library
};

struct FleetSplitPoint {
  double load_qps = 0;          // the class's whole load
  std::vector<double> weights;  // one per kind, summing to 1
  double accuracy = 0;          // the class's expectation at this split
  double violation_rate = 0;
};

// The split for a class load among `splits` (strictly ascending load, not
// empty): the lowest split load at or above it (each kind's share then was
// planned for at least this load), else the highest.
const FleetSplitPoint& split_at(const std::vector<FleetSplitPoint>& splits, double load_qps);

struct FleetClassTables {
  std::string name;
  std::int64_t slo_us = 0;
  double max_violation = 0;
  double share = 0;  // the class's fraction of the fleet's load
  std::vector<FleetKindTables> kinds;
  std::vector<FleetSplitPoint> splits;  // strictly ascending load

  // The split for a class load among the file's splits (the free split_at).
  const FleetSplitPoint& split_at(double load_qps) const { return core::split_at(splits, load_qps); }
  // The index of a kind by name; -1 when the class has none of that name.
  int kind_index(const std::string& kind) const;
};

struct FleetTables {
  std::vector<FleetClassTables> classes;           // in the file's order; the first is the default class
  int class_index(const std::string& name) const;  // -1 when unknown
};

// Why `next` cannot replace `served` under a running lull serve (SIGHUP):
// the groups' servers, sessions and pools are built for the served classes
// and kinds, so the classes (names, order, SLO), their kinds (names, order,
// counts) and each kind's task and models must be the same. "" when it can.
std::string fleet_reload_refusal(const FleetTables& served, const FleetTables& next);

// Throws std::runtime_error("PATH: classes[i] 'name': what is wrong").
// expect.task, when set, must be every library's task; expect.workers and
// expect.slo_ms are not checked (each class has its own).
FleetTables load_fleet_tables(const std::string& path, const PolicyExpectations& expect = {});
// The same checks on an in-memory fleet (tests, tools); `where` prefixes errors.
FleetTables fleet_tables_from_proto(const schema::FleetPolicy& fleet, const PolicyExpectations& expect,
                                    const std::string& where);

}  // namespace lull::core
