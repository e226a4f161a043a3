#pragma once
// lull plan's compiler side: from reduced profiles and a request (a target
// and a load or a rate trace, optionally a per-worker memory budget) to the
// fewest workers (per window for a trace), the models they load, and a
// capacity table, all from the compiler's own expectations (worker_search.h).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/plan/shard_plan.h"
#include "compiler/plan/trace_windows.h"
#include "compiler/plan/worker_search.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {

// lull plan's default --phase-cap (docs/user-guide.md, "Large fleets"): worker
// counts above it are modelled with this many phases at their load per
// worker. Chosen from the measured error (experiments/fleet_scale.py).
inline constexpr int kPlanPhaseCap = 240;

struct PlanRequest {
  CompileSpec spec;  // profiles, reduction, MDP, solver (workers and loads are the search's)
  PlanTarget target;
  int max_workers = 1000;  // the search never goes past this count
  double load_qps = 0;     // a load plan when not 0 ...
  std::string trace_path;  // ... or a rate-file trace plan
  double window_s = 60;
  double lead_s = 0;
  double worker_memory_mb = 0;                 // 0: every model fits
  std::vector<int> capacity_workers;           // empty: counts around the plan
  double shard_qps_limit = kMeasuredShardQps;  // one lull process's throughput: when to shard
};

// The fewest workers for the plan's (peak) load under another arrival
// process, the same models and target: what bursts cost in workers.
struct BurstinessRow {
  ArrivalProcess arrivals;
  int workers = 0;       // 0: no count up to max_workers meets the target
  Expectation expected;  // at `workers`
};

// The processes of that table: Poisson, then Gamma with CV^2 = 2, 4, 8.
std::vector<ArrivalProcess> burstiness_processes();

struct PlanResult {
  std::vector<std::string> models;  // loaded on every worker
  double models_memory_mb = 0;      // their memory sum (0 when not measured)
  int subsets_tried = 0;            // with a memory budget: the candidate subsets
  // A load plan: the choice, and the same load with one worker fewer.
  WorkerChoice choice;
  bool has_fewer = false;
  Expectation fewer;
  // A trace plan: one window and choice per entry.
  std::vector<TraceWindow> windows;
  std::vector<WorkerChoice> schedule;
  double worker_seconds = 0;
  std::vector<CapacityRow> capacity;
  // Expectations at the plan's load (a trace's busiest window) for the
  // planned count and each capacity-table count that can carry the load:
  // accuracy against workers.
  double curve_load_qps = 0;
  std::vector<WorkerChoice> curve;
  // At curve_load_qps, one row per burstiness_processes() entry.
  std::vector<BurstinessRow> burstiness;
  // The same plan as shards behind a balancer: G for the (peak) load at
  // request.shard_qps_limit, K per shard (G = 1: one process suffices).
  ShardPlan shards;
  std::size_t solves = 0;  // policies compiled
};

// Throws std::invalid_argument naming the flag for a target outside (0, 1),
// a minimum accuracy outside [0, 1), neither or both of a load and a trace, ...
void validate_plan_request(const PlanRequest& request);

using PlanProgress = std::function<void(const std::string& stage, std::size_t solves)>;

// Validates, then plans. Throws PlanError for a target out of reach,
// std::invalid_argument for bad input (the trace file's errors name it).
PlanResult run_plan(const PlanRequest& request, const ReducedProfiles& profiles, Solver& solver,
                    const PlanProgress& progress = nullptr);

// The counts a capacity table shows by default: five to eight from
// max(1, lowest / 2) to highest * 1.5, on a round step.
std::vector<int> default_capacity_workers(int lowest, int highest, int max_workers);

}  // namespace lull::compiler
