#pragma once
// The planner's searches over compiled policies, built on two monotonicity
// assumptions (more workers never hurt at a fixed load; more load never helps
// at a fixed worker count): the fewest workers that meet a target at a load
// (k-ary bisection over worker counts, one probe per thread and round), the
// same for a sorted list of loads (divide and conquer: a load between two
// loads that need the same count needs no solve at all), and the capacity
// table (per worker count, the highest load that meets the target).
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

// The fewest workers in 1..max_workers that meet `target` at `load_qps`.
// `known_short` is a count known not to meet it (0: none), `known_enough` one
// known to meet it (0: none); both narrow the search. Throws PlanError.
WorkerChoice fewest_workers(ExpectationCache& cache, double load_qps, const PlanTarget& target, int max_workers,
                            int known_short = 0, int known_enough = 0);

// fewest_workers for every load (any order; equal loads are solved once).
std::vector<WorkerChoice> fewest_workers_for_loads(ExpectationCache& cache, const std::vector<double>& loads_qps,
                                                   const PlanTarget& target, int max_workers);

struct CapacityRow {
  int workers = 0;
  double max_load_qps = 0;  // 0 when no load meets the target
  Expectation expected;     // at max_load_qps
};

// For each worker count, the highest load (within max(1 QPS, 0.5%)) meeting
// the target, bracketed first by what the cache already knows.
std::vector<CapacityRow> capacity_table(ExpectationCache& cache, const std::vector<int>& workers,
                                        const PlanTarget& target);

// "violation 0.0123, accuracy 0.8410" (or "beyond the fastest model's capacity").
std::string describe(const Expectation& e);

}  // namespace lull::compiler
