// Model variants from the plan (what and why: variant_plan.h).
#include "compiler/plan/variant_plan.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>

#include "compiler/parallel_for.h"
#include "compiler/plan/memory_subsets.h"

namespace lull::compiler {
namespace {

void validate(const VariantPlanRequest& r) {
  validate_target_and_memory(r.target, r.worker_memory_mb);
  if (r.spec.loads_qps.size() < 2)
    throw std::invalid_argument("--load-qps: variants need a sweep of loads (LO:HI:STEP or a list), got one load");
  validate_compile_spec(r.spec);
}

Expectation expectation_of(const LoadReport& r) {
  return Expectation{r.expected_accuracy, r.expected_violation_rate, r.beyond_capacity};
}

// Each candidate's expectation at one load, solved in parallel (one thread
// per candidate, as a sweep runs its loads).
std::vector<Expectation> at_one_load(const ReducedProfiles& profiles, const std::vector<std::vector<int>>& candidates,
                                     const CompileSpec& spec, double load_qps, Solver& solver) {
  const int n = static_cast<int>(candidates.size());
  std::vector<Expectation> out(candidates.size());
  parallel_for_each(n, n > 1 && solver.concurrent_solves() && !omp_in_parallel(), [&](int i) {
    out[static_cast<std::size_t>(i)] = expectation_of(
        compile_load(restrict_models(profiles, candidates[static_cast<std::size_t>(i)]), spec, load_qps, solver));
  });
  return out;
}

bool is_subset(const std::vector<int>& small, const std::vector<int>& big) {
  return std::includes(big.begin(), big.end(), small.begin(), small.end());
}

}  // namespace

std::size_t pick_candidate(const std::vector<Expectation>& expected, const std::vector<std::size_t>& sizes,
                           const PlanTarget& target) {
  if (expected.empty() || expected.size() != sizes.size()) throw std::invalid_argument("pick_candidate: no candidates");
  std::size_t best = 0;
  bool best_meets = meets(expected[0], target);
  for (std::size_t i = 1; i < expected.size(); ++i) {
    const bool m = meets(expected[i], target);
    const Expectation &e = expected[i], &b = expected[best];
    bool better;
    if (m != best_meets) {
      better = m;
    } else if (m) {
      better = e.accuracy > b.accuracy || (e.accuracy == b.accuracy && sizes[i] < sizes[best]);
    } else {  // none meets: the lowest violation, a load beyond capacity last
      better =
          (!e.beyond_capacity && b.beyond_capacity) ||
          (e.beyond_capacity == b.beyond_capacity &&
           (e.violation_rate < b.violation_rate || (e.violation_rate == b.violation_rate && sizes[i] < sizes[best])));
    }
    if (better) {
      best = i;
      best_meets = m;
    }
  }
  return best;
}

std::vector<VariantGroup> group_loads(const std::vector<std::vector<int>>& set_by_load) {
  std::vector<VariantGroup> out;
  for (std::size_t i = 0; i < set_by_load.size(); ++i)
    if (out.empty() || out.back().models != set_by_load[i]) out.push_back({i, set_by_load[i]});
  return out;
}

VariantPlan plan_variants(const VariantPlanRequest& req, const ReducedProfiles& profiles, Solver& solver,
                          const std::function<void(const std::string&, std::size_t)>& progress) {
  validate(req);
  check_slo_feasible(profiles, req.spec.mdp.slo_us);
  CompileSpec spec = req.spec;
  std::sort(spec.loads_qps.begin(), spec.loads_qps.end());
  spec.loads_qps.erase(std::unique(spec.loads_qps.begin(), spec.loads_qps.end()), spec.loads_qps.end());
  VariantPlan plan;
  // The lowest load picks among every candidate: its set is what the servers
  // hold at start, so every later variant must lie within it.
  const auto all = subsets_with_fastest_within(profiles, req.worker_memory_mb);
  plan.candidates = static_cast<int>(all.size());
  const auto sizes_of = [](const std::vector<std::vector<int>>& sets) {
    std::vector<std::size_t> sizes;
    for (const auto& s : sets) sizes.push_back(s.size());
    return sizes;
  };
  const auto first = at_one_load(profiles, all, spec, spec.loads_qps.front(), solver);
  plan.solves += all.size();
  const std::vector<int> base = all[pick_candidate(first, sizes_of(all), req.target)];
  if (progress) progress("lowest load's set chosen", plan.solves);
  // Every subset of it (with model 0) over the whole sweep, policies kept:
  // the chosen ones are the variants' sets.
  std::vector<std::vector<int>> within;
  for (const auto& s : all)
    if (is_subset(s, base)) within.push_back(s);
  std::vector<SweepResult> sweeps;
  for (const auto& s : within) {
    sweeps.push_back(run_sweep(SweepRequest{restrict_models(profiles, s), spec}, solver));
    plan.solves += spec.loads_qps.size();
    if (progress) progress("sets within it compiled", plan.solves);
  }
  std::vector<std::size_t> pick_by_load;
  std::vector<std::vector<int>> set_by_load;
  for (std::size_t l = 0; l < spec.loads_qps.size(); ++l) {
    std::vector<Expectation> e;
    for (const auto& s : sweeps) e.push_back(expectation_of(s.reports[l]));
    const std::size_t pick = pick_candidate(e, sizes_of(within), req.target);
    pick_by_load.push_back(pick);
    set_by_load.push_back(within[pick]);
    plan.loads.push_back({spec.loads_qps[l], within[pick], e[pick], meets(e[pick], req.target)});
  }
  for (const auto& g : group_loads(set_by_load)) {
    PlannedVariant v;
    v.from_qps = g.first_load == 0 ? 0 : spec.loads_qps[g.first_load];
    v.models = g.models;
    for (int i : g.models) v.memory_mb += profiles.models[static_cast<std::size_t>(i)].memory_mb;
    v.sweep = sweeps[pick_by_load[g.first_load]];
    plan.variants.push_back(std::move(v));
  }
  return plan;
}

}  // namespace lull::compiler
