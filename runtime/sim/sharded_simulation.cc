#include "runtime/sim/sharded_simulation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "runtime/core/shard.h"

namespace lull::sim {

ShardArrivals::ShardArrivals(std::unique_ptr<ArrivalSource> all, int index, int count)
    : all_(std::move(all)), index_(index), count_(count) {}

bool ShardArrivals::next(std::int64_t* t_us) {
  std::int64_t t = 0;
  while (all_->next(&t))
    if (seen_++ % static_cast<std::uint64_t>(count_) == static_cast<std::uint64_t>(index_)) {
      *t_us = t;
      return true;
    }
  return false;
}

namespace {

// A shard's policy in the fleet's terms: G*K workers at the global load.
void add_fleet_use(std::vector<PolicyUse>& fleet, PolicyUse use, int shards) {
  use.workers *= shards;
  use.load_qps *= shards;
  for (PolicyUse& f : fleet)
    if (f.workers == use.workers && f.arrivals == use.arrivals &&
        std::abs(f.load_qps - use.load_qps) <= 1e-9 * std::max(1.0, use.load_qps)) {
      f.usage.decisions += use.usage.decisions;
      f.usage.queries += use.usage.queries;
      f.usage.fallbacks += use.usage.fallbacks;
      return;
    }
  fleet.push_back(use);
}

ShardResult shard_numbers(const SimResult& r, const core::Shard& shard, int workers) {
  ShardResult s;
  s.label = shard.label();
  s.workers = workers;
  static_cast<Outcomes&>(s) = r;
  s.worker_seconds = r.worker_seconds;
  s.new_policy_events = r.new_policy_events;
  return s;
}

}  // namespace

SimResult simulate_shards(const ShardedRun& run, const SimOptions& options) {
  if (run.shards < 1 || run.workers_per_shard < 1)
    throw std::invalid_argument("a sharded run needs at least 1 shard of at least 1 worker");
  if (options.scheduler != SchedulerKind::kLull || !options.worker_events.empty() || options.compiler ||
      options.autoscale.enabled || options.variants.enabled() || options.timeline)
    throw std::invalid_argument(
        "shards run lull's scheduler without --fail, --workers-at, --workers-schedule, --online-compile, "
        "--autoscale, --variant-sets or --timeline (each is per process)");
  SimResult total;
  total.scheduler = "lull";
  for (int i = 0; i < run.shards; ++i) {
    const core::Shard shard{i, run.shards};
    SimOptions o = options;
    o.library = core::shard_library(run.library, shard, run.workers_per_shard);
    o.workers_up = run.workers_per_shard;
    o.arrival_thinning = run.shards;  // the shard's pattern is read as the fleet's stream
    // The set the shard starts on: the nearest worker count not above K (as lull simulate's).
    std::size_t start = 0;
    for (std::size_t t = 0; t < o.library.size(); ++t)
      if (o.library[t].workers <= run.workers_per_shard) start = t;
    const core::PolicyTable table = o.library[start];
    ShardArrivals arrivals(run.arrivals(), i, run.shards);
    const std::unique_ptr<LatencyModel> latency = run.latency(table, i);
    const SimResult r = run_simulation(table, nullptr, arrivals, *latency, o);
    total.shards.push_back(shard_numbers(r, shard, run.workers_per_shard));
    add(total, r);
    for (const PolicyUse& u : r.policies_used) add_fleet_use(total.policies_used, u, run.shards);
    total.worker_seconds += r.worker_seconds;
    if (total.satisfied_per_model.size() < r.satisfied_per_model.size())
      total.satisfied_per_model.resize(r.satisfied_per_model.size(), 0);
    for (std::size_t m = 0; m < r.satisfied_per_model.size(); ++m)
      total.satisfied_per_model[m] += r.satisfied_per_model[m];
    total.new_policy_events += r.new_policy_events;
    total.pattern_switches += r.pattern_switches;
    total.pattern_beyond_events += r.pattern_beyond_events;
    if (total.pattern_beyond_first.empty()) total.pattern_beyond_first = r.pattern_beyond_first;
    total.simulated_s = std::max(total.simulated_s, r.simulated_s);
    total.wall_s += r.wall_s;
  }
  finish(total);
  return total;
}

}  // namespace lull::sim
