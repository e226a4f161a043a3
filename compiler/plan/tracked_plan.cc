#include "compiler/plan/tracked_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "compiler/compile_library.h"
#include "compiler/lagged_mixture.h"
#include "compiler/transient_expectation.h"
#include "compiler/plan/worker_search.h"
#include "schema/count_rule.h"

namespace lull::compiler {
namespace {

// A policy grid 2.5% of the mean load apart (at least 1 QPS), as a library
// compiled for the plan would hold.
double grid_step(double load_qps) { return std::max(1.0, std::round(load_qps * 0.025)); }

}  // namespace

TrackedPlan plan_tracked(ExpectationCache& cache, const std::vector<std::int64_t>& t, double trace_qps, double load_qps,
                         const PlanTarget& target, int max_workers, const TrackedLag* lag) {
  const auto shares = served_load_shares(t, load_qps / trace_qps);
  const double step = grid_step(load_qps);
  std::vector<double> loads;  // the grid loads the estimates are served by
  for (const auto& [load, share] : shares) {
    const double g = std::max(step, std::ceil(load / step - 1e-9) * step);
    if (loads.empty() || loads.back() != g) loads.push_back(g);
  }
  TrackedPlan plan;
  plan.grid_step_qps = step;
  plan.lagged = lag != nullptr;
  std::map<int, LoadExpectation> known, estimate_only;
  std::map<int, std::vector<LoadExpectation>> grids;
  // The lag term's pairs: the trace on the time axis of load_qps (time shrunk by the scale).
  std::vector<ServedPair> pairs;
  std::vector<std::int64_t> scaled;
  if (lag) {
    if (!lag->solver) throw std::invalid_argument("plan_tracked: the lag term needs a solver");
    scaled.resize(t.size());
    const double shrink = trace_qps / load_qps;
    for (std::size_t i = 0; i < t.size(); ++i)
      scaled[i] = t.front() + std::llround(static_cast<double>(t[i] - t.front()) * shrink);
    if (!lag->transient) pairs = served_load_pairs(scaled, step, lag->count_dispersion);
  }
  auto at = [&](int k) {
    if (auto it = known.find(k); it != known.end()) return it->second;
    std::vector<PlanPoint> points;
    for (double g : loads) points.push_back({k, g});
    const auto e = cache.at(points);
    std::vector<LoadExpectation> grid;
    for (std::size_t i = 0; i < loads.size(); ++i)
      grid.push_back({loads[i], e[i].accuracy, e[i].beyond_capacity ? 1.0 : e[i].violation_rate});
    grids[k] = grid;
    estimate_only[k] = served_mixture(shares, grid);
    if (!lag) return known[k] = estimate_only[k];
    CompileSpec spec = cache.spec();
    spec.mdp.workers = k;
    spec.loads_qps = loads;
    const auto sweeps = compile_library(cache.profiles(), {spec}, nullptr, *lag->solver);
    LoadExpectation m = lag->transient ? transient_expectation(cache.profiles(), spec, sweeps.front(), scaled, step,
                                                               lag->count_dispersion, lag->late)
                                       : lagged_mixture(cache.profiles(), spec, sweeps.front(), pairs, 1e-4, lag->late);
    m.load_qps = estimate_only[k].load_qps;
    return known[k] = m;
  };
  // The shared rule (schema/count_rule.h): the fewest count whose mixture
  // over the load estimates meets the target, searched from the count for the
  // mean load (a lower bound where the rate moves). With the lag term, from
  // the count without it (its compiled expectations are cached, the lag's
  // libraries not).
  auto ok = [&](int k) {
    const LoadExpectation m = at(k);
    return meets_count_target({m.load_qps, m.accuracy, m.violation}, target.max_violation, target.min_accuracy);
  };
  int hint = 0;
  try {
    hint = lag ? plan_tracked(cache, t, trace_qps, load_qps, target, max_workers).workers
               : fewest_workers(cache, load_qps, target, max_workers).workers;
  } catch (const PlanError&) {
    hint = max_workers;
  }
  const int hi = fewest_count_meeting(hint, max_workers, ok);
  if (hi == 0)
    throw PlanError("no worker count up to " + std::to_string(max_workers) +
                    " meets the target on the trace's rates (" + std::to_string(max_workers) +
                    " workers: expected violation " + std::to_string(at(max_workers).violation) + ")");
  plan.workers = hi;
  plan.expected = at(hi);
  plan.estimate_only = estimate_only[hi];
  if (hi > 1) plan.one_fewer = at(hi - 1);
  for (const auto& [k, m] : known) plan.tried.emplace_back(k, m);
  for (const auto& g : grids[hi]) {
    if (g.violation > target.max_violation) break;
    plan.capacity_qps = g.load_qps;
  }
  for (const auto& [load, share] : shares)
    if (load <= plan.capacity_qps) plan.capacity_quantile += share;
  return plan;
}

}  // namespace lull::compiler
