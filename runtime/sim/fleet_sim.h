#pragma once
// Simulating a mixed fleet (docs/operators-guide.md): each class's arrivals are split
// over its kinds at random with the class's split weights at the class's
// load, round-robin within a kind. A random split of a Poisson stream gives
// independent Poisson streams, so each (class, kind) group is run on its own
// by the one Simulator, on its share of the class's stream; the class and
// fleet results are the groups' counts added up.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/fleet_tables.h"
#include "runtime/sim/arrivals.h"
#include "runtime/sim/simulator.h"

namespace lull::sim {

// One group's part of a stream split at random: every arrival of `stream`
// draws one uniform number from `split_seed`, and the group whose cumulative
// weight interval (weights_at the arrival's time) holds it takes the arrival.
// Sources over the same stream (same trace and seed) with the same split seed
// draw the same numbers, so the groups partition one stream exactly.
class SplitArrivals final : public ArrivalSource {
 public:
  using WeightsAt = std::function<const std::vector<double>&(std::int64_t t_us)>;
  SplitArrivals(std::unique_ptr<ArrivalSource> stream, WeightsAt weights_at, std::size_t group,
                std::uint64_t split_seed);
  bool next(std::int64_t* t_us) override;

 private:
  std::unique_ptr<ArrivalSource> stream_;
  WeightsAt weights_at_;
  std::size_t group_;
  std::mt19937_64 rng_;
};

struct FleetSimSpec {
  std::vector<RateSegment> segments;  // the fleet's whole rate over time; a class gets share x rate
  std::vector<ArrivalStep> process;   // each class's arrival process
  double dispatch_end_s = 0;          // SimOptions::dispatch_end_s
  std::uint64_t seed = 1;
  // --autoscale: every group has its own autoscaler and simulated pool, from
  // its file count at the start, over its kind's library, sized by its own
  // arrivals (its weight of the class's) at its class's violation target
  // (manager::group_target); `autoscale.target` gives the rest.
  SimAutoscale autoscale;
};

// Counts added over groups, and the expectation they are held against.
struct FleetMix : Outcomes {
  double expected_accuracy = 0, expected_violation_rate = 0;
  double worker_seconds = 0, cost = 0;  // workers provisioned for the whole run, times price_per_s
};

struct FleetGroupResult {
  std::string kind;
  int workers = 0;  // at the start (the file's count)
  double price_per_s = 0;
  double weight = 0;                         // the split weight, averaged over the class's expected arrivals
  double worker_seconds = 0, cost = 0;       // with autoscaling: the pool's workers, start to stop
  const core::PolicyTable* table = nullptr;  // the set the group ran with (its worker count)
  SimResult result;
};

struct FleetClassResult {
  std::string name;
  double slo_ms = 0, share = 0;
  double mean_load_qps = 0;  // the class's expected arrivals over the run's length
  FleetMix mix;              // expectation: the splits' records, weighted by the class's expected arrivals
  std::vector<FleetGroupResult> groups;
  // --autoscale: the split is re-searched for the workers up over time (as
  // lull serve does); the class was simulated this many times until the
  // counts its groups produced were those its split was searched for.
  int split_passes = 1;
  bool split_converged = true;  // false: kMaxSplitPasses passes and still moving
};

struct FleetSimResult {
  std::vector<FleetClassResult> classes;
  FleetMix fleet;  // expectation: the classes' mixed by their expected arrivals
  double run_s = 0;
};

// Throws std::invalid_argument for a spec without segments or load.
FleetSimResult simulate_fleet(const core::FleetTables& fleet, const FleetSimSpec& spec);

}  // namespace lull::sim
