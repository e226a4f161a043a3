#include "runtime/fleet_tables.h"

#include <stdexcept>

#include "schema/fleet_file.h"

namespace lull::runtime {

const FleetSplitPoint& FleetClassTables::split_at(double load_qps) const {
  for (const auto& s : splits)
    if (s.load_qps >= load_qps) return s;
  return splits.back();
}

int FleetClassTables::kind_index(const std::string& name) const {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i].kind == name) return static_cast<int>(i);
  return -1;
}

int FleetTables::class_index(const std::string& name) const {
  for (std::size_t i = 0; i < classes.size(); ++i)
    if (classes[i].name == name) return static_cast<int>(i);
  return -1;
}

FleetTables fleet_tables_from_proto(const schema::FleetPolicy& fleet, const PolicyExpectations& expect,
                                    const std::string& where) {
  verify_fleet_policy(fleet, where);  // a PolicyFileError is a std::runtime_error
  FleetTables out;
  for (int i = 0; i < fleet.classes_size(); ++i) {
    const auto& c = fleet.classes(i);
    const std::string at = where + ": classes[" + std::to_string(i) + "] '" + c.name() + "'";
    FleetClassTables ct;
    ct.name = c.name();
    ct.slo_us = static_cast<std::int64_t>(c.slo_ms() * 1000.0 + 0.5);
    ct.max_violation = c.max_violation();
    ct.share = c.share();
    PolicyExpectations per_set = expect;
    per_set.workers = 0;
    per_set.slo_ms = c.slo_ms();
    for (int k = 0; k < c.kinds_size(); ++k) {
      const auto& kind = c.kinds(k);
      FleetKindTables kt;
      kt.kind = kind.kind();
      kt.workers = static_cast<int>(kind.workers());
      kt.price_per_s = kind.price_per_s();
      for (int s = 0; s < kind.library().sets_size(); ++s)
        kt.library.push_back(policy_table_from_proto(
            kind.library().sets(s), per_set,
            at + ": kinds[" + std::to_string(k) + "] '" + kt.kind + "': sets[" + std::to_string(s) + "]"));
      ct.kinds.push_back(std::move(kt));
    }
    for (const auto& s : c.splits())
      ct.splits.push_back({s.load_qps(), {s.weights().begin(), s.weights().end()}, s.accuracy(), s.violation_rate()});
    out.classes.push_back(std::move(ct));
  }
  return out;
}

FleetTables load_fleet_tables(const std::string& path, const PolicyExpectations& expect) {
  return fleet_tables_from_proto(read_fleet_policy(path), expect, path);
}

}  // namespace lull::runtime
