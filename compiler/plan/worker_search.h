#pragma once
// The planner's searches over compiled policies: the fewest workers that meet
// a target at each of a list of loads, and the capacity table (per worker
// count, the highest load that meets it).
//
// The compiler's expected violation is NOT monotone in workers or load: the
// optimal policy trades accuracy against violations differently from one
// (workers, load) to the next, so the violation can rise by a point from one
// count to the next. The searches therefore use monotonicity only to guess
// and to bracket, and verify what they return: a planned count meets the
// target and one worker fewer does not (both solved, or the count below is
// beyond the fastest model's capacity); a capacity load meets the target and
// a load at most one tolerance step above it does not.
//
// All searches run in lockstep: each round every open search adds its probes
// (two each, so both cores of a small machine stay busy even for one search)
// and the expectation cache solves the round's new points in parallel. A
// search starts from a guess scaled from a known answer (the same workers
// per QPS), probes the guess and the count below it, gallops (steps 1, 2,
// 4, ...) towards the answer, then bisects. Once at a count K that meets with
// K-1 short, it probes K-2, K-4, ... down to K - pocket_depth (a single
// load: K-8), and, across the loads of one call, the count planned for a
// busier load when that is lower: the expected violation has bumps (at 3000
// QPS, image, SLO 150 ms: 55-57 workers meet 1%, 58-60 do not, 61 does), and
// a lower count that meets restarts the search below it. So the answer is
// the lowest boundary the probes saw, not always the fewest count there is.
// A worker count whose fastest-model capacity is below the load is never
// planned (its queue would grow without bound whatever the MDP expects).
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

// For each load, a count K in 1..max_workers that meets the target with K-1
// (and K-2, K-4) not meeting it (the smallest such K when the expectations
// are monotone).
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

// For each worker count, a load that meets the target while a load at most
// 2% (at least 1 QPS) above it does not, found from a guess of
// `qps_per_worker` x workers (0: from the fastest model's capacity).
std::vector<CapacityRow> capacity_table(ExpectationCache& cache, const std::vector<int>& workers,
                                        const PlanTarget& target, double qps_per_worker = 0);

// "expected violation 0.0123, accuracy 0.8410" (or "beyond the fastest model's capacity").
std::string describe(const Expectation& e);

}  // namespace lull::compiler
