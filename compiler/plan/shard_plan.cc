#include "compiler/plan/shard_plan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "schema/number_text.h"

namespace lull::compiler {
namespace {

// The fewest K >= ceil(planned / G) with G*K carrying the load (carries()).
// Probes a few counts per round (the cache solves a round in parallel).
int fewest_per_shard(ExpectationCache& cache, int shards, const WorkerChoice& planned, const PlanTarget& target,
                     int max_workers) {
  const int first = (planned.workers + shards - 1) / shards;
  const int last = std::max(first, (max_workers + shards - 1) / shards);
  constexpr int kRound = 2;  // both cores of a small machine
  for (int k = first; k <= last; k += kRound) {
    std::vector<PlanPoint> probe;
    for (int j = k; j < k + kRound && j <= last; ++j) probe.push_back({shards * j, planned.load_qps});
    const auto e = cache.at(probe);
    for (std::size_t i = 0; i < probe.size(); ++i)
      if (meets(e[i], target) && carries(cache, probe[i].workers, planned.load_qps, target))
        return probe[i].workers / shards;
  }
  const Expectation at_last = cache.at(shards * last, planned.load_qps);
  throw PlanError("no fleet of " + std::to_string(shards) + " shards with up to " + std::to_string(shards * last) +
                  " workers meets the target at " + number_text(planned.load_qps) + " QPS: the largest tried has " +
                  describe(at_last));
}

}  // namespace

int shards_for_load(double load_qps, double qps_limit) {
  return std::max(1, static_cast<int>(std::ceil(load_qps / qps_limit - 1e-9)));
}

void validate_shard_limit(double qps_limit) {
  if (!(qps_limit > 0 && std::isfinite(qps_limit)))
    throw std::invalid_argument("--shard-qps-limit must be a number of queries per second above 0 (got " +
                                number_text(qps_limit) + ")");
}

ShardPlan plan_shards(ExpectationCache& cache, double qps_limit, const PlanTarget& target, int max_workers,
                      const WorkerChoice& load_choice) {
  validate_shard_limit(qps_limit);
  ShardPlan p;
  p.qps_limit = qps_limit;
  p.load_qps = load_choice.load_qps;
  p.shards = shards_for_load(p.load_qps, qps_limit);
  p.workers_per_shard = fewest_per_shard(cache, p.shards, load_choice, target, max_workers);
  p.workers = p.shards * p.workers_per_shard;
  p.expected = cache.at(p.workers, p.load_qps);
  p.worker_seconds = p.workers;  // per second of the load
  return p;
}

ShardPlan plan_shards(ExpectationCache& cache, double qps_limit, const PlanTarget& target, int max_workers,
                      const std::vector<TraceWindow>& windows, const std::vector<WorkerChoice>& schedule) {
  validate_shard_limit(qps_limit);
  ShardPlan p;
  p.qps_limit = qps_limit;
  for (const WorkerChoice& c : schedule) p.load_qps = std::max(p.load_qps, c.load_qps);
  p.shards = shards_for_load(p.load_qps, qps_limit);
  for (std::size_t i = 0; i < schedule.size() && i < windows.size(); ++i) {
    const int k = fewest_per_shard(cache, p.shards, schedule[i], target, max_workers);
    p.workers_per_shard_by_window.push_back(k);
    p.worker_seconds += p.shards * k * (windows[i].end_s - windows[i].start_s);
    p.workers_per_shard = std::max(p.workers_per_shard, k);
  }
  p.workers = p.shards * p.workers_per_shard;
  return p;
}

}  // namespace lull::compiler
