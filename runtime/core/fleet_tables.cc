#include "runtime/core/fleet_tables.h"

#include <stdexcept>

#include "schema/fleet_file.h"

namespace lull::core {

const FleetSplitPoint& split_at(const std::vector<FleetSplitPoint>& splits, double load_qps) {
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

namespace {

std::string model_names(const FleetKindTables& k) {
  std::string names;
  if (!k.library.empty())
    for (const auto& m : k.library.front().models) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

}  // namespace

std::string fleet_reload_refusal(const FleetTables& served, const FleetTables& next) {
  const auto names = [](const FleetTables& f) {
    std::string out;
    for (const auto& c : f.classes) out += (out.empty() ? "" : ", ") + c.name;
    return out;
  };
  if (names(served) != names(next))
    return "classes " + names(next) + " (served: " + names(served) + "); restart lull serve to serve other classes";
  for (std::size_t c = 0; c < served.classes.size(); ++c) {
    const auto &a = served.classes[c], &b = next.classes[c];
    const std::string at = "class '" + a.name + "': ";
    if (a.slo_us != b.slo_us) return at + "another SLO (" + std::to_string(b.slo_us / 1000) + " ms)";
    if (a.kinds.size() != b.kinds.size()) return at + "other kinds";
    for (std::size_t k = 0; k < a.kinds.size(); ++k) {
      const auto &ka = a.kinds[k], &kb = b.kinds[k];
      if (ka.kind != kb.kind) return at + "kind '" + kb.kind + "' where '" + ka.kind + "' is served";
      if (ka.workers != kb.workers)
        return at + "kind '" + ka.kind + "': " + std::to_string(kb.workers) +
               " workers (served: " + std::to_string(ka.workers) + ")";
      if (model_names(ka) != model_names(kb) ||
          (!ka.library.empty() && !kb.library.empty() && ka.library.front().task != kb.library.front().task))
        return at + "kind '" + ka.kind + "': another task or other models";
    }
  }
  return "";
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

}  // namespace lull::core
