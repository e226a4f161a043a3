#pragma once
// When to shard (docs/operators-guide.md "Shards"): one lull process
// carries at most a measured number of queries per second, so a load above
// it needs G = ceil(load / limit) shards behind a per-request round-robin
// balancer. Each shard owns K workers and serves the policies compiled for
// G*K workers (runtime/core/shard.h), so the fleet must be a multiple of G: K is
// the fewest with G*K meeting the target at the load, from ceil(planned / G)
// up (the expected violation is not monotone in workers: worker_search.h).
#include <vector>

#include "compiler/plan/expectation_cache.h"
#include "compiler/plan/trace_windows.h"
#include "compiler/plan/worker_search.h"

namespace lull::compiler {

// One `lull serve` process's measured throughput (docs/benchmarks.md,
// "Throughput of one shard": at least 8,000 QPS sustained on one core of the
// 2-core VM with p99 overhead under 1 ms, experiments/throughput.sh): lull
// plan's default --shard-qps-limit. Measure yours and pass it.
inline constexpr double kMeasuredShardQps = 8000;

struct ShardPlan {
  double qps_limit = 0;  // one shard's throughput limit
  double load_qps = 0;   // what G is sized for: the load, or a trace's busiest window
  int shards = 1;        // G
  // A load plan: K and the fleet G*K at the load, its expectations and the
  // host seconds its policy took to compile (the compile cost at that count).
  int workers_per_shard = 0;
  int workers = 0;
  Expectation expected;
  // A trace plan: K per window (G fixed: a StatefulSet's replicas) and the
  // fleet's worker-seconds, G*K x the window length summed.
  std::vector<int> workers_per_shard_by_window;
  double worker_seconds = 0;
};

// G = ceil(load / limit), at least 1. `limit` > 0 and finite (validated by
// validate_shard_limit).
int shards_for_load(double load_qps, double qps_limit);

// Throws std::invalid_argument naming --shard-qps-limit unless > 0 and finite.
void validate_shard_limit(double qps_limit);

// From the plan's choice (a load) or schedule (a trace, with its windows):
// G, and the fewest K per load with G*K meeting the target (G*K <=
// max_workers rounded up to a multiple of G). Throws PlanError when no such K.
ShardPlan plan_shards(ExpectationCache& cache, double qps_limit, const PlanTarget& target, int max_workers,
                      const WorkerChoice& load_choice);
ShardPlan plan_shards(ExpectationCache& cache, double qps_limit, const PlanTarget& target, int max_workers,
                      const std::vector<TraceWindow>& windows, const std::vector<WorkerChoice>& schedule);

}  // namespace lull::compiler
