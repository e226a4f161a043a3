#include "compiler/plan/capacity_plan.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "compiler/plan/memory_subsets.h"
#include "schema/input_limits.h"
#include "schema/number_text.h"

namespace lull::compiler {
namespace {

// A load plan below 1 QPS (an idle window of a trace) plans for 1 QPS: the
// MDP needs arrivals, and one worker serves either.
constexpr double kMinPlannedQps = 1;

struct SubsetPlan {
  std::unique_ptr<ExpectationCache> cache;
  std::vector<int> models;
  WorkerChoice choice;
};

// Workers per QPS to start the search from. Where the count the fastest
// model suggests is phase-capped, the expectations depend on the load per
// worker alone: one capacity search at that count gives the load per worker
// every capped count carries, so the worker search starts next to its
// answer, on lattice points already solved (expectation_cache.h). 0 otherwise
// (fewest_workers' own guess).
double capped_seed(ExpectationCache& cache, double load, const PlanTarget& target) {
  const int guess = static_cast<int>(std::ceil(load * 1.5 / cache.capacity_qps(1)));
  if (guess < 1 || !cache.is_capped(guess)) return 0;
  const CapacityRow row = capacity_table(cache, {guess}, target).front();
  return row.max_load_qps > 0 ? guess / row.max_load_qps : 0;
}

// The subset (of the maximal ones within the budget) needing the fewest
// workers at `load`, then the most accurate at that count.
SubsetPlan best_subset(const PlanRequest& req, const ReducedProfiles& profiles, Solver& solver, double load,
                       PlanResult* result, std::size_t* solves) {
  std::vector<std::vector<int>> subsets;
  if (req.worker_memory_mb > 0) {
    subsets = maximal_subsets_within(profiles, req.worker_memory_mb);
  } else {
    subsets.emplace_back();
    for (std::size_t i = 0; i < profiles.models.size(); ++i) subsets.back().push_back(static_cast<int>(i));
  }
  result->subsets_tried = static_cast<int>(subsets.size());
  SubsetPlan best;
  std::string last_error;
  for (const auto& s : subsets) {
    auto cache = std::make_unique<ExpectationCache>(restrict_models(profiles, s), req.spec, solver);
    WorkerChoice c;
    try {
      if (best.cache) {
        // Only a subset that meets the target at the best count so far can win.
        const Expectation e = cache->at(best.choice.workers, load);
        if (!meets(e, req.target)) {
          *solves += cache->solves();
          continue;
        }
        c = fewest_workers(*cache, load, req.target, req.max_workers, best.choice.workers / load);
      } else {
        c = fewest_workers(*cache, load, req.target, req.max_workers, capped_seed(*cache, load, req.target));
      }
    } catch (const PlanError& e) {
      if (subsets.size() == 1) throw;
      last_error = e.what();
      *solves += cache->solves();
      continue;
    }
    const bool better = !best.cache || c.workers < best.choice.workers ||
                        (c.workers == best.choice.workers && c.expected.accuracy > best.choice.expected.accuracy);
    if (better) {
      if (best.cache) *solves += best.cache->solves();
      best = SubsetPlan{std::move(cache), s, c};
    } else {
      *solves += cache->solves();
    }
  }
  if (!best.cache)
    throw PlanError("no subset of models within --worker-memory-mb " + number_text(req.worker_memory_mb) +
                    " meets the target; the last tried: " + last_error);
  return best;
}

// The burstiness table's rows at `load`: the plan's own process reuses its
// cache; each other process gets one over the same models, its search seeded
// by the plan's workers per QPS.
std::vector<BurstinessRow> burstiness_rows(const PlanRequest& req, ExpectationCache& plan_cache, int plan_workers,
                                           double load, Solver& solver, std::size_t* solves) {
  std::vector<BurstinessRow> rows;
  for (const ArrivalProcess& process : burstiness_processes()) {
    BurstinessRow row;
    row.arrivals = process;
    std::unique_ptr<ExpectationCache> own;
    ExpectationCache* cache = &plan_cache;
    if (!(process == req.spec.mdp.arrivals)) {
      CompileSpec spec = plan_cache.spec();
      spec.mdp.arrivals = process;
      own = std::make_unique<ExpectationCache>(plan_cache.profiles(), spec, solver, plan_cache.capped());
      cache = own.get();
    }
    try {
      const WorkerChoice c = fewest_workers(*cache, load, req.target, req.max_workers, plan_workers / load);
      row.workers = c.workers;
      row.expected = c.expected;
    } catch (const PlanError&) {
      row.workers = 0;  // out of reach up to --max-workers: shown as such
    }
    if (own) *solves += own->solves();
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

std::vector<ArrivalProcess> burstiness_processes() {
  return {ArrivalProcess::poisson(), ArrivalProcess::gamma(2), ArrivalProcess::gamma(4), ArrivalProcess::gamma(8)};
}

void validate_plan_request(const PlanRequest& r) {
  const auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  validate_target_and_memory(r.target, r.worker_memory_mb);
  if ((r.load_qps != 0) == !r.trace_path.empty()) bad("lull plan needs exactly one of --load-qps and --trace");
  if (r.trace_path.empty() && !(r.load_qps > 0 && r.load_qps <= limits::kMaxLoadQps))
    bad("--load-qps must be in (0, " + number_text(limits::kMaxLoadQps) + "] (got " + number_text(r.load_qps) + ")");
  if (!(r.max_workers >= 1 && r.max_workers <= limits::kMaxWorkers))
    bad("--max-workers must be in 1.." + std::to_string(limits::kMaxWorkers) + " (got " +
        std::to_string(r.max_workers) + ")");
  validate_shard_limit(r.shard_qps_limit);
  if (!(r.window_s > 0 && r.window_s <= limits::kMaxTraceSeconds))
    bad("--window-s must be in (0, " + number_text(limits::kMaxTraceSeconds) + "] s (got " + number_text(r.window_s) +
        ")");
  if (!(r.lead_s >= 0 && r.lead_s <= limits::kMaxTraceSeconds))
    bad("--lead-s must be in [0, " + number_text(limits::kMaxTraceSeconds) + "] s (got " + number_text(r.lead_s) + ")");
  for (int k : r.capacity_workers)
    if (k < 1 || k > r.max_workers)
      bad("--capacity-workers: " + std::to_string(k) + " is outside 1..--max-workers (" +
          std::to_string(r.max_workers) + ")");
}

std::vector<int> default_capacity_workers(int lowest, int highest, int max_workers) {
  const int from = std::max(1, lowest / 2), to = std::min(max_workers, std::max(from + 1, highest + (highest + 1) / 2));
  const double raw = (to - from) / 7.0;
  int step = 100000;  // the smallest round step that gives at most about eight counts
  for (int s :
       {100000, 50000, 25000, 20000, 10000, 5000, 2500, 2000, 1000, 500, 250, 200, 100, 50, 25, 20, 10, 5, 2, 1})
    if (s >= raw) step = s;
  std::vector<int> out;
  for (int k = (from + step - 1) / step * step; k <= to; k += step) out.push_back(std::max(1, k));
  if (out.empty()) out.push_back(from);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

PlanResult run_plan(const PlanRequest& req, const ReducedProfiles& profiles, Solver& solver,
                    const PlanProgress& progress) {
  validate_plan_request(req);
  PlanResult result;
  std::size_t solves = 0;
  const auto report = [&](const std::string& stage, const ExpectationCache& cache) {
    if (progress) progress(stage, solves + cache.solves());
  };
  std::vector<double> loads;
  if (!req.trace_path.empty()) {
    result.windows = trace_windows(read_rate_file(req.trace_path), req.window_s, req.lead_s);
    for (const auto& w : result.windows) loads.push_back(std::max(kMinPlannedQps, w.load_qps));
  }
  // The models: all of them, or the best subset within the memory budget at
  // the plan's load (for a trace, its peak window: the count that matters).
  const double design_load = loads.empty() ? req.load_qps : *std::max_element(loads.begin(), loads.end());
  SubsetPlan plan = best_subset(req, profiles, solver, design_load, &result, &solves);
  ExpectationCache& cache = *plan.cache;
  for (int i : plan.models) {
    const auto& m = profiles.models[static_cast<std::size_t>(i)];
    result.models.push_back(m.name);
    result.models_memory_mb += m.memory_mb;
  }
  report("models chosen", cache);
  int lowest = plan.choice.workers, highest = plan.choice.workers;
  if (loads.empty()) {
    result.choice = plan.choice;
    if (result.choice.workers > 1) {
      result.has_fewer = true;
      result.fewer = cache.at(result.choice.workers - 1, req.load_qps);
    }
  } else {
    result.schedule =
        fewest_workers_for_loads(cache, loads, req.target, req.max_workers, plan.choice.workers / design_load, 2);
    for (std::size_t i = 0; i < result.schedule.size(); ++i) {
      const auto& w = result.windows[i];
      result.worker_seconds += result.schedule[i].workers * (w.end_s - w.start_s);
      lowest = std::min(lowest, result.schedule[i].workers);
      highest = std::max(highest, result.schedule[i].workers);
    }
    report("schedule planned", cache);
  }
  result.shards = loads.empty() ? plan_shards(cache, req.shard_qps_limit, req.target, req.max_workers, result.choice)
                                : plan_shards(cache, req.shard_qps_limit, req.target, req.max_workers, result.windows,
                                              result.schedule);
  report("shards planned", cache);
  const auto counts =
      req.capacity_workers.empty() ? default_capacity_workers(lowest, highest, req.max_workers) : req.capacity_workers;
  // Each count's search starts from the fastest model's capacity, not from the plan's load per worker: the
  // first crossing a search finds depends on where it starts, and a count's capacity should not depend on the plan.
  result.capacity = capacity_table(cache, counts, req.target);
  // The accuracy-against-workers curve: the same counts and the planned one at the plan's (peak) load.
  result.curve_load_qps = design_load;
  std::vector<int> curve_counts = counts;
  curve_counts.push_back(plan.choice.workers);  // the planned count itself
  std::sort(curve_counts.begin(), curve_counts.end());
  curve_counts.erase(std::unique(curve_counts.begin(), curve_counts.end()), curve_counts.end());
  std::vector<PlanPoint> curve;
  for (int k : curve_counts)
    if (cache.capacity_qps(k) >= design_load) curve.push_back({k, design_load});
  const auto curve_e = cache.at(curve);
  for (std::size_t i = 0; i < curve.size(); ++i) result.curve.push_back({design_load, curve[i].workers, curve_e[i]});
  report("capacity table", cache);
  const int planned = loads.empty() ? plan.choice.workers : highest;
  result.burstiness = burstiness_rows(req, cache, planned, design_load, solver, &solves);
  result.solves = solves + cache.solves();
  if (progress) progress("burstiness table", result.solves);
  return result;
}

}  // namespace lull::compiler
