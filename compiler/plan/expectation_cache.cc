#include "compiler/plan/expectation_cache.h"

#include <omp.h>

#include <exception>

#include "compiler/compile_sweep.h"

namespace lull::compiler {

bool meets(const Expectation& e, const PlanTarget& target) {
  return !e.beyond_capacity && e.violation_rate <= target.max_violation && e.accuracy >= target.min_accuracy;
}

ExpectationCache::ExpectationCache(ReducedProfiles profiles, CompileSpec spec, Solver& solver)
    : profiles_(std::move(profiles)), spec_(std::move(spec)), solver_(solver) {}

double ExpectationCache::capacity_qps(int workers) const {
  return compiler::capacity_qps(profiles_, workers, spec_.mdp.max_queue);
}

std::size_t ExpectationCache::solves() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

std::map<PlanPoint, Expectation> ExpectationCache::known() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_;
}

Expectation ExpectationCache::solve(const PlanPoint& p) {
  CompileSpec spec = spec_;
  spec.mdp.workers = p.workers;
  const LoadReport r = compile_load(profiles_, spec, p.load_qps, solver_);
  return Expectation{r.expected_accuracy, r.expected_violation_rate, r.beyond_capacity};
}

std::vector<Expectation> ExpectationCache::at(const std::vector<PlanPoint>& points) {
  std::vector<PlanPoint> missing;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& p : points)
      if (!cache_.count(p)) {
        bool queued = false;
        for (const auto& m : missing) queued = queued || !(m < p || p < m);
        if (!queued) missing.push_back(p);
      }
  }
  const int n = static_cast<int>(missing.size());
  std::vector<Expectation> solved(missing.size());
  std::exception_ptr failure;  // exceptions must not escape an OpenMP region
  // Like a sweep: independent solves, one thread each (run_sweep says why).
#pragma omp parallel for schedule(dynamic) if (n > 1 && solver_.concurrent_solves() && !omp_in_parallel())
  for (int i = 0; i < n; ++i) {
    try {
      solved[i] = solve(missing[i]);
    } catch (...) {
#pragma omp critical(lull_plan_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  std::lock_guard<std::mutex> lock(mutex_);
  for (int i = 0; i < n; ++i) cache_[missing[i]] = solved[i];
  std::vector<Expectation> out;
  out.reserve(points.size());
  for (const auto& p : points) out.push_back(cache_.at(p));
  return out;
}

}  // namespace lull::compiler
