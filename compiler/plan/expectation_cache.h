#pragma once
// The planner's one source of numbers: the compiler's own expectations
// (accuracy per satisfied query, violation rate) of the policy for K workers
// at load L, compiled on first use and cached. Every search of the planner
// asks this cache, so a (workers, load) pair is solved at most once per plan.
#include <cstddef>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"
#include "schema/split_search.h"

namespace lull::compiler {

// Expectation, PlanTarget and meets are schema/split_search.h's (the runtime
// re-searches a fleet's split with them too).
using ::lull::Expectation;
using ::lull::meets;
using ::lull::PlanTarget;

// Throws std::invalid_argument naming the flag for a target outside its
// range (--max-violation in (0, 1), --min-accuracy in [0, 1)) or a memory
// budget below 0 or not finite (--worker-memory-mb). Shared by lull plan and
// lull plan variants.
void validate_target_and_memory(const PlanTarget& target, double worker_memory_mb);

struct PlanPoint {
  int workers = 0;
  double load_qps = 0;
  bool operator<(const PlanPoint& o) const {
    return std::make_pair(workers, load_qps) < std::make_pair(o.workers, o.load_qps);
  }
};

class ExpectationCache {
 public:
  // `spec` says everything but the worker count and the load (its
  // mdp.workers and loads_qps are ignored); the solver must outlive the cache.
  ExpectationCache(ReducedProfiles profiles, CompileSpec spec, Solver& solver);

  // Solves the points not cached yet (in parallel when the solver allows and
  // no parallel region is running), then returns all of them in order.
  std::vector<Expectation> at(const std::vector<PlanPoint>& points);
  Expectation at(int workers, double load_qps) { return at({{workers, load_qps}}).front(); }

  // Largest load the fastest model can serve on `workers` (compile_sweep's capacity_qps).
  double capacity_qps(int workers) const;
  const ReducedProfiles& profiles() const { return profiles_; }
  const CompileSpec& spec() const { return spec_; }
  std::size_t solves() const;                      // policies compiled so far
  std::map<PlanPoint, Expectation> known() const;  // a copy of everything solved so far

 private:
  Expectation solve(const PlanPoint& p);

  ReducedProfiles profiles_;
  CompileSpec spec_;
  Solver& solver_;
  mutable std::mutex mutex_;
  std::map<PlanPoint, Expectation> cache_;
};

}  // namespace lull::compiler
