#include "compiler/fleet/fleet_compile.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "compiler/compile_inputs.h"
#include "compiler/compile_library.h"
#include "compiler/lagged_mixture.h"
#include "compiler/profile/profile_source.h"

namespace lull::compiler {
namespace {

std::set<std::string> names_of(const std::vector<ModelTable>& models) {
  std::set<std::string> out;
  for (const auto& m : models) out.insert(m.name);
  return out;
}

std::string class_field(const FleetDescription& fleet, int ci) {
  return fleet.path + ": classes[" + std::to_string(ci) + "] '" + fleet.classes[static_cast<std::size_t>(ci)].name +
         "'";
}

// Every kind has each model another kind of the class has (or, with --models, each named one).
void check_same_models(const FleetDescription& fleet, int ci, const std::vector<FleetClassWorkers>& workers,
                       const FleetClassInputs& in, const std::vector<std::set<std::string>>& raw,
                       const std::vector<std::string>& named) {
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string at = class_field(fleet, ci) + ".workers." + workers[i].kind + ": the kind's profile (" +
                           fleet.kinds[static_cast<std::size_t>(in.kinds[i])].profiles + ") lacks model '";
    for (const auto& m : named)
      if (!raw[i].count(m)) throw FleetDescriptionError(at + m + "' (named by --models)");
    if (!named.empty()) continue;
    for (std::size_t j = 0; j < raw.size(); ++j)
      for (const auto& m : raw[j])
        if (!raw[i].count(m)) throw FleetDescriptionError(at + m + "' that kind '" + workers[j].kind + "' has");
  }
}

}  // namespace

FleetClassInputs load_fleet_class_inputs(const FleetDescription& fleet, int ci,
                                         const std::vector<FleetClassWorkers>& workers, const CompileSpec& spec) {
  const auto& c = fleet.classes[static_cast<std::size_t>(ci)];
  FleetClassInputs in;
  std::vector<std::set<std::string>> raw;
  for (const auto& w : workers) {
    const int k = fleet.kind_index(w.kind);
    const auto& kind = fleet.kinds[static_cast<std::size_t>(k)];
    CompileSpec s = spec;
    s.inputs.path = kind.profiles;
    s.inputs.accuracy_json = kind.accuracy_percent;
    s.mdp.slo_us = c.slo_ms * 1000;
    s.mdp.workers = std::max(w.count, 1);  // plan: the search sets it
    s.loads_qps = {1};                     // the caller sets them
    std::set<std::string> names;
    const auto set = load_profile_source(s.inputs.path, s.inputs.accuracy_json, s.inputs.task);
    for (const auto& m : set.models()) names.insert(m.name());
    in.kinds.push_back(k);
    in.specs.push_back(std::move(s));
    raw.push_back(std::move(names));
  }
  check_same_models(fleet, ci, workers, in, raw, spec.reduction.models);
  std::set<std::string> all;
  for (const auto& s : in.specs) {
    in.profiles.push_back(load_compile_inputs(s).profiles);
    const auto names = names_of(in.profiles.back().models);
    all.insert(names.begin(), names.end());
  }
  // Pareto fronts that differ by kind: every kind keeps the union, so the
  // kinds of a class serve the same models (the fleet file's rule).
  for (std::size_t i = 0; i < in.specs.size(); ++i)
    if (names_of(in.profiles[i].models) != all) {
      in.specs[i].reduction.models.assign(all.begin(), all.end());
      in.profiles[i] = load_compile_inputs(in.specs[i]).profiles;
    }
  return in;
}

FleetCompileResult compile_fleet(const FleetDescription& fleet, const CompileSpec& spec,
                                 const std::vector<double>& fleet_loads_qps, int weight_steps, Solver& solver,
                                 const FleetProgress& progress, int count_spread, FleetServed served) {
  if (count_spread < 0) throw std::invalid_argument("--count-spread: must be >= 0");
  if (fleet_loads_qps.empty()) throw std::invalid_argument("--load-qps: no load given");
  require_workers(fleet);
  FleetCompileResult out;
  for (int ci = 0; ci < static_cast<int>(fleet.classes.size()); ++ci) {
    const auto& c = fleet.classes[static_cast<std::size_t>(ci)];
    const FleetClassInputs in = load_fleet_class_inputs(fleet, ci, c.workers, spec);
    const int n = static_cast<int>(c.workers.size());
    std::vector<double> fixed;
    for (const auto& w : c.workers) fixed.push_back(w.weight);
    const auto grid = c.fixed_weights ? std::vector<std::vector<double>>{fixed} : weight_grid(n, weight_steps);
    std::vector<double> class_loads;
    for (double l : fleet_loads_qps) class_loads.push_back(c.share * l);
    const PlanTarget target{c.max_violation, c.min_accuracy};

    auto& cp = *out.policy.add_classes();
    cp.set_name(c.name);
    cp.set_slo_ms(c.slo_ms);
    cp.set_max_violation(c.max_violation);
    cp.set_share(c.share);
    std::vector<std::map<double, Expectation>> known(static_cast<std::size_t>(n)), served_known(known.size());
    for (int k = 0; k < n; ++k) {
      // Every load a weight of the grid (or the fixed weight) sends this
      // kind, and the whole class load for the kind-alone comparison.
      std::set<double> loads;
      for (double l : class_loads) {
        loads.insert(kind_load(l, 1.0));
        for (const auto& w : grid)
          if (w[static_cast<std::size_t>(k)] > 0) loads.insert(kind_load(l, w[static_cast<std::size_t>(k)]));
      }
      CompileSpec s = in.specs[static_cast<std::size_t>(k)];
      s.loads_qps.assign(loads.begin(), loads.end());
      // The kind's own count, and the counts around it (--count-spread) at
      // the same loads: sets for fewer workers (failures) and for the
      // autoscaler's (class, kind) group (manager::FleetCapacity).
      const int own = s.mdp.workers;
      std::vector<CompileSpec> specs;
      for (int w = std::max(1, own - count_spread); w <= own + count_spread; ++w) {
        specs.push_back(s);
        specs.back().mdp.workers = w;
        validate_compile_spec(specs.back());
      }
      const int sets = static_cast<int>(specs.size());
      const auto sweeps = compile_library(in.profiles[static_cast<std::size_t>(k)], specs, nullptr, solver,
                                          [&](int set, int, int done, int total, const LoadReport& r) {
                                            if (progress) progress(ci, k, set * total + done, sets * total, r);
                                          });
      for (std::size_t i = 0; i < sweeps.size(); ++i) {
        const auto& sw = sweeps[i];
        out.policies += sw.sweep.set.policies_size();
        if (sw.workers != own) continue;
        auto& m = known[static_cast<std::size_t>(k)];
        for (const auto& r : sw.sweep.reports)
          m[r.load_qps] = {r.expected_accuracy, r.expected_violation_rate, r.beyond_capacity};
        if (!served.on) continue;
        for (const auto& e :
             served_expectations(in.profiles[static_cast<std::size_t>(k)], specs[i], sw, kLoadWindowUs, served.late))
          served_known[static_cast<std::size_t>(k)][e.load_qps] = {e.accuracy, e.violation,
                                                                   m.at(e.load_qps).beyond_capacity};
      }
      auto& kp = *cp.add_kinds();
      kp.set_kind(c.workers[static_cast<std::size_t>(k)].kind);
      kp.set_workers(static_cast<std::uint32_t>(c.workers[static_cast<std::size_t>(k)].count));
      kp.set_price_per_s(fleet.kinds[static_cast<std::size_t>(in.kinds[static_cast<std::size_t>(k)])].price_per_s);
      *kp.mutable_library() = policy_library_of(sweeps);
    }
    const auto lookup_in = [](const std::vector<std::map<double, Expectation>>& table) -> KindExpectation {
      return [&table](int k, double load) {
        const auto& m = table[static_cast<std::size_t>(k)];
        const auto it = m.find(load);
        if (it == m.end()) throw std::logic_error("compile_fleet: no policy compiled at " + std::to_string(load));
        return it->second;
      };
    };
    const KindExpectation lookup = lookup_in(known);
    for (double l : class_loads) {
      FleetSplitReport rep;
      rep.class_name = c.name;
      rep.class_load_qps = l;
      rep.fixed = c.fixed_weights;
      rep.chosen = best_split(grid, l, target, lookup);
      for (int k = 0; k < n; ++k) rep.alone.push_back(split_at(alone_weights(n, k), l, target, lookup));
      if (served.on) {
        rep.has_served = true;
        rep.served = split_at(rep.chosen.weights, l, target, lookup_in(served_known));
      }
      auto& sp = *cp.add_splits();
      sp.set_load_qps(l);
      for (double w : rep.chosen.weights) sp.add_weights(w);
      sp.set_accuracy(rep.chosen.expected.accuracy);
      sp.set_violation_rate(rep.chosen.expected.violation_rate);
      out.splits.push_back(std::move(rep));
    }
  }
  return out;
}

}  // namespace lull::compiler
