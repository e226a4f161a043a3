#pragma once
// `lull simulate --shards G`: the fleet as G lull shards behind a strict
// per-request round-robin balancer (docs/operators-guide.md "Shards"). Arrival i of
// the global stream goes to shard i mod G; each shard is a lull with K =
// workers/G workers serving runtime/core/shard.h's view of the library (the sets
// compiled for G*K workers, loads divided by G), choosing by its own load
// estimate, and dealing its arrivals round-robin over its K workers. Shards
// share nothing, so each runs as its own simulation over its share of the
// stream; the result adds them up (and keeps each shard's numbers).
#include <functional>
#include <memory>
#include <vector>

#include "runtime/core/policy_table.h"
#include "runtime/sim/arrivals.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/simulator.h"

namespace lull::sim {

// Arrivals index, index + count, index + 2*count, ... (0-based) of `all`:
// what a per-request round-robin balancer hands shard `index` of `count`.
class ShardArrivals final : public ArrivalSource {
 public:
  ShardArrivals(std::unique_ptr<ArrivalSource> all, int index, int count);
  bool next(std::int64_t* t_us) override;

 private:
  std::unique_ptr<ArrivalSource> all_;
  int index_, count_;
  std::uint64_t seen_ = 0;
};

struct ShardedRun {
  std::vector<core::PolicyTable> library;  // the fleet's, compiled for shards x workers_per_shard workers
  int shards = 1;                          // G
  int workers_per_shard = 0;               // K
  // A fresh copy of the global arrival stream (the same seed each call).
  std::function<std::unique_ptr<ArrivalSource>()> arrivals;
  // The latency model of shard `index`, serving `table` (its view).
  std::function<std::unique_ptr<LatencyModel>(const core::PolicyTable& table, int index)> latency;
};

// Runs the shards and adds them up: counts and worker-seconds summed,
// accuracy per satisfied query and violation rate over all queries,
// policies_used in the fleet's terms (G*K workers, global load), and one
// ShardResult per shard. `options` is lull's scheduler with the run's
// seed, load window and dispatch end; worker events, online compilation,
// autoscaling, variants and a timeline are per process and refused
// (std::invalid_argument), as are a library without G*K workers and G < 1.
SimResult simulate_shards(const ShardedRun& run, const SimOptions& options);

}  // namespace lull::sim
