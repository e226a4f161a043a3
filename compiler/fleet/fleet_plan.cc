#include "compiler/fleet/fleet_plan.h"

#include <map>
#include <memory>
#include <set>

#include "compiler/compile_library.h"
#include "compiler/fleet/fleet_compile.h"
#include "compiler/lagged_mixture.h"
#include "compiler/plan/expectation_cache.h"
#include "compiler/plan/worker_search.h"

namespace lull::compiler {
namespace {

// The fewest workers of one kind per load, or none for a load no count up to
// max_workers meets (searched on its own then, so the others keep theirs).
std::map<double, WorkerChoice> fewest_by_load(ExpectationCache& cache, const std::set<double>& loads,
                                              const PlanTarget& target, int max_workers) {
  std::map<double, WorkerChoice> out;
  const std::vector<double> list(loads.begin(), loads.end());
  try {
    for (const auto& c : fewest_workers_for_loads(cache, list, target, max_workers)) out[c.load_qps] = c;
  } catch (const PlanError&) {
    for (double l : list) try {
        out[l] = fewest_workers(cache, l, target, max_workers);
      } catch (const PlanError&) {
      }
  }
  return out;
}

FleetMix mix_at(const std::vector<double>& weights, double load, const std::vector<double>& prices,
                const std::vector<std::map<double, WorkerChoice>>& fewest) {
  FleetMix m;
  m.weights = weights;
  m.workers.assign(weights.size(), 0);
  m.found = true;
  std::vector<Expectation> kinds(weights.size());
  for (std::size_t k = 0; k < weights.size(); ++k) {
    if (weights[k] <= 0) continue;
    const auto it = fewest[k].find(kind_load(load, weights[k]));
    if (it == fewest[k].end()) {
      m.found = false;
      continue;
    }
    m.workers[k] = it->second.workers;
    kinds[k] = it->second.expected;
    m.cost_per_s += it->second.workers * prices[k];
  }
  m.expected = mix_expectation(weights, kinds);
  return m;
}

bool cheaper(const FleetMix& a, const FleetMix& b) {
  if (a.found != b.found) return a.found;
  if (a.cost_per_s != b.cost_per_s) return a.cost_per_s < b.cost_per_s;
  return a.expected.accuracy > b.expected.accuracy;
}

// The cheapest mix served through each kind's load estimate: a library at
// the kind's count over the grid around its share, evaluated at the share.
void serve_cheapest(FleetClassPlan& plan, const FleetClassInputs& in, const PlanTarget& target, Solver& solver,
                    bool late, FleetPlan& out, const std::string& class_name, const FleetPlanProgress& progress) {
  const auto& mix = plan.cheapest;
  plan.by_kind.assign(mix.weights.size(), {});
  std::vector<Expectation> kinds(mix.weights.size());
  for (std::size_t k = 0; k < mix.weights.size(); ++k) {
    if (mix.weights[k] <= 0) continue;
    FleetServedKind& sk = plan.by_kind[k];
    sk.load_qps = kind_load(plan.load_qps, mix.weights[k]);
    CompileSpec spec = in.specs[k];
    spec.mdp.workers = mix.workers[k];
    sk.grid_qps = served_load_grid(sk.load_qps, served_dispersion(spec));
    spec.loads_qps = sk.grid_qps;
    validate_compile_spec(spec);
    const auto sweeps = compile_library(in.profiles[k], {spec}, nullptr, solver);
    out.solves += static_cast<std::size_t>(sweeps.front().sweep.set.policies_size());
    const LoadExpectation e =
        served_expectation_at(in.profiles[k], spec, sweeps.front(), sk.load_qps, kLoadWindowUs, late);
    sk.served = kinds[k] = {e.accuracy, e.violation, false};
    if (progress) progress("class " + class_name + ", kind " + plan.kinds[k] + " served", out.solves);
  }
  plan.has_served = true;
  plan.served = mix_expectation(mix.weights, kinds);
  plan.served_meets = meets(plan.served, target);
}

}  // namespace

FleetPlan plan_fleet(const FleetDescription& fleet, const CompileSpec& spec, double fleet_load_qps, int weight_steps,
                     int max_workers, Solver& solver, const FleetPlanProgress& progress, FleetServed served) {
  FleetPlan out;
  for (int ci = 0; ci < static_cast<int>(fleet.classes.size()); ++ci) {
    const auto& c = fleet.classes[static_cast<std::size_t>(ci)];
    std::vector<FleetClassWorkers> candidates = c.workers;
    if (candidates.empty())
      for (const auto& k : fleet.kinds) candidates.push_back({k.name, 0, 0});
    const FleetClassInputs in = load_fleet_class_inputs(fleet, ci, candidates, spec);
    FleetClassPlan plan;
    plan.name = c.name;
    plan.load_qps = c.share * fleet_load_qps;
    const int n = static_cast<int>(candidates.size());
    for (int k = 0; k < n; ++k) {
      plan.kinds.push_back(candidates[static_cast<std::size_t>(k)].kind);
      plan.prices.push_back(fleet.kinds[static_cast<std::size_t>(in.kinds[static_cast<std::size_t>(k)])].price_per_s);
    }
    const auto grid = weight_grid(n, weight_steps);
    const PlanTarget target{c.max_violation, c.min_accuracy};
    std::vector<std::map<double, WorkerChoice>> fewest;
    for (int k = 0; k < n; ++k) {
      std::set<double> loads;
      for (const auto& w : grid)
        if (w[static_cast<std::size_t>(k)] > 0) loads.insert(kind_load(plan.load_qps, w[static_cast<std::size_t>(k)]));
      ExpectationCache cache(in.profiles[static_cast<std::size_t>(k)], in.specs[static_cast<std::size_t>(k)], solver);
      fewest.push_back(fewest_by_load(cache, loads, target, max_workers));
      out.solves += cache.solves();
      if (progress) progress("class " + c.name + ", kind " + candidates[static_cast<std::size_t>(k)].kind, out.solves);
    }
    plan.cheapest = mix_at(grid.front(), plan.load_qps, plan.prices, fewest);
    for (std::size_t i = 1; i < grid.size(); ++i) {
      FleetMix m = mix_at(grid[i], plan.load_qps, plan.prices, fewest);
      if (cheaper(m, plan.cheapest)) plan.cheapest = std::move(m);
    }
    for (int k = 0; k < n; ++k) plan.alone.push_back(mix_at(alone_weights(n, k), plan.load_qps, plan.prices, fewest));
    if (served.on && plan.cheapest.found) serve_cheapest(plan, in, target, solver, served.late, out, c.name, progress);
    out.classes.push_back(std::move(plan));
  }
  return out;
}

}  // namespace lull::compiler
