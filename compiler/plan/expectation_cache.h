#pragma once
// The planner's one source of numbers: the compiler's own expectations
// (accuracy per satisfied query, violation rate) of the policy for K workers
// at load L, compiled on first use and cached. Every search of the planner
// asks this cache, so a (workers, load) pair is solved at most once per plan.
#include <cstddef>
#include <map>
#include <memory>
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

// The phase-capped problems (spec.mdp.phase_cap, docs/user-guide.md "Large
// fleets") a plan has solved. A count K above the cap at load L is the
// problem of cap workers at the load L cap / K' (K' the process's phases):
// a function of the load per worker only, the same for Poisson and Gamma.
// Its load is rounded UP to a lattice of kCapLatticeSteps points per 2% load
// step, on which the 2%-grid walks of worker_search.h land exactly, so the
// probes of every count, and of the plan's other arrival patterns, share
// their solves. Shared by the caches of one plan (same profiles and spec but
// for the arrival process).
struct CappedSolves {
  std::mutex mutex;                                       // taken after an ExpectationCache's own
  std::map<std::pair<double, long>, Expectation> solved;  // (dispersion, lattice index) -> expectation
};

// Lattice points per 2% load step (each 0.50% apart).
inline constexpr int kCapLatticeSteps = 4;

class ExpectationCache {
 public:
  // `spec` says everything but the worker count and the load (its
  // mdp.workers and loads_qps are ignored); the solver must outlive the cache.
  // `capped`: the capped solves to share (nullptr: a fresh set).
  ExpectationCache(ReducedProfiles profiles, CompileSpec spec, Solver& solver,
                   std::shared_ptr<CappedSolves> capped = nullptr);

  // Solves the points not cached yet (in parallel when the solver allows and
  // no parallel region is running), then returns all of them in order.
  std::vector<Expectation> at(const std::vector<PlanPoint>& points);
  Expectation at(int workers, double load_qps) { return at({{workers, load_qps}}).front(); }

  // Largest load the fastest model can serve on `workers` (compile_sweep's capacity_qps).
  double capacity_qps(int workers) const;
  const ReducedProfiles& profiles() const { return profiles_; }
  const CompileSpec& spec() const { return spec_; }
  std::size_t solves() const;                      // policies this cache compiled so far
  std::map<PlanPoint, Expectation> known() const;  // a copy of everything solved so far
  const std::shared_ptr<CappedSolves>& capped() const { return capped_; }
  // True when `workers` is modelled with the phase cap (its expectations
  // are the capped problem's at the lattice load).
  bool is_capped(int workers) const;

 private:
  // The problem a point is solved as: itself, or its capped lattice point.
  struct Key {
    bool capped = false;
    PlanPoint point;        // uncapped: the point itself
    double dispersion = 1;  // capped: batch:D keeps D; Poisson and Gamma are 1
    long lattice = 0;       // capped: load = 1.02^(lattice / kCapLatticeSteps) QPS at cap workers
    bool operator==(const Key& o) const {
      return capped == o.capped && !(point < o.point) && !(o.point < point) && dispersion == o.dispersion &&
             lattice == o.lattice;
    }
  };
  Key key_of(const PlanPoint& p) const;
  Expectation solve(const Key& k);
  bool cached(const Key& k) const;

  ReducedProfiles profiles_;
  CompileSpec spec_;
  Solver& solver_;
  std::shared_ptr<CappedSolves> capped_;
  mutable std::mutex mutex_;
  std::map<PlanPoint, Expectation> cache_;
  std::size_t compiled_ = 0;
};

}  // namespace lull::compiler
