#pragma once
// The planner's searches over compiled policies: the fewest workers that
// carry each of a list of loads, and the capacity table (per worker count,
// the highest load it carries).
//
// The compiler's expected violation is NOT monotone in workers or load: the
// optimal policy trades accuracy against violations differently from one
// (workers, load) to the next. As the load rises it moves to faster models,
// so the violation has humps with dips above them (K = 60, image, SLO
// 150 ms, Poisson, 1%: 3000-3175 QPS miss, 3200-3325 meet, 3350 misses; at
// 3000 QPS, 55-57 workers meet, 58-60 do not, 61 do). A count planned in such
// a dip misses the target as soon as the load falls back into the hump below
// it, and a bursty pattern can land in a dip a Poisson search steps over. So
// both searches ask for the FIRST crossing, on a grid of 2% load steps:
// workers K carry a load L when they meet the target at L and at every grid
// load below it down to 0.9 L (carries()); a count's capacity is the highest
// load from which every grid load down to 0.9 x it meets. The walk down
// needs only to cross the dip: measured at K = 20, 40, 60 and 80 under
// Poisson and gamma:2, 4, 8 (1% target), no dip is wider than 4.0%. Humps
// further down are not looked for: each comes from a switch to a faster
// model, the next one down lies about a third lower in load and is smaller
// (the models switched between differ less in accuracy: K = 60, 0.0019 at
// 2000 QPS).
//
// The searches use monotonicity only to guess and to bracket, and verify
// what they return: a planned count carries the load and one worker fewer
// does not (or cannot carry it with the fastest model at all); a capacity
// load meets the target with every grid load down to 0.9 x it, and a load at
// most one grid step above it does not.
//
// All searches run in lockstep: each round every open search adds its probes
// (two each, so both cores of a small machine stay busy even for one search)
// and the expectation cache solves the round's new points in parallel (for a
// probe that meets its load, the grid below it in a second batch). A worker
// search starts from a guess scaled from a known answer (the same workers
// per QPS), probes the guess and the count below it, gallops (steps 1, 2,
// 4, ...) towards the answer, then bisects. Once at a count K that carries
// with K-1 short, it probes K-2, K-4, ... down to K - pocket_depth (a single
// load: K-8), and, across the loads of one call, the count planned for a
// busier load when that is lower; a lower count that carries restarts the
// search below it. So the answer is the lowest boundary the probes saw. A
// capacity search gallops and bisects over loads to a bracket, then walks
// down the grid from it (worker_search.cc, first_crossing). A worker count
// whose fastest-model capacity is below the load is never planned (its
// queue would grow without bound whatever the MDP expects).
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/plan/expectation_cache.h"

namespace lull::compiler {

// A target no worker count up to the limit meets; the message names the
// largest count tried and its expectations.
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct WorkerChoice {
  double load_qps = 0;
  int workers = 0;
  Expectation expected;  // at `workers`
};

// For each load, a count K in 1..max_workers that carries it with K-1 (and
// K-2, K-4) not carrying it (the smallest such K when carrying is monotone
// in the count, as measured on the image task).
// `workers_per_qps` seeds the guesses (0: from the fastest model's capacity).
// Throws PlanError for a load no count up to max_workers meets.
std::vector<WorkerChoice> fewest_workers_for_loads(ExpectationCache& cache, const std::vector<double>& loads_qps,
                                                   const PlanTarget& target, int max_workers,
                                                   double workers_per_qps = 0, int pocket_depth = 4);
WorkerChoice fewest_workers(ExpectationCache& cache, double load_qps, const PlanTarget& target, int max_workers,
                            double workers_per_qps = 0);

struct CapacityRow {
  int workers = 0;
  double max_load_qps = 0;    // 0 when no load meets the target
  double short_load_qps = 0;  // a load at most 2% (1 QPS) above it that does not
  Expectation expected;       // at max_load_qps
};

// For each worker count, a load that meets the target, with every 2%-grid
// load down to 0.9 x it, while a load at most 2% (at least 1 QPS) above it
// does not, found from a guess of
// `qps_per_worker` x workers (0: from the fastest model's capacity).
std::vector<CapacityRow> capacity_table(ExpectationCache& cache, const std::vector<int>& workers,
                                        const PlanTarget& target, double qps_per_worker = 0);

// True when `workers` meet the target at `load` and at every load below it on
// the 2% grid down to 0.9 x the load (solving what is missing, in parallel):
// what a planned count guarantees.
bool carries(ExpectationCache& cache, int workers, double load_qps, const PlanTarget& target);

// "expected violation 0.0123, accuracy 0.8410" (or "beyond the fastest model's capacity").
std::string describe(const Expectation& e);

}  // namespace lull::compiler
