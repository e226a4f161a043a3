#include "compiler/plan/expectation_cache.h"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "compiler/compile_sweep.h"
#include "compiler/parallel_for.h"
#include "schema/number_text.h"

namespace lull::compiler {

void validate_target_and_memory(const PlanTarget& t, double worker_memory_mb) {
  const auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  if (!(t.max_violation > 0 && t.max_violation < 1))
    bad("--max-violation must be in (0, 1) (got " + number_text(t.max_violation) + ")");
  if (!(t.min_accuracy >= 0 && t.min_accuracy < 1))
    bad("--min-accuracy must be in (0, 1) (got " + number_text(t.min_accuracy) + ")");
  if (!(worker_memory_mb >= 0 && std::isfinite(worker_memory_mb)))
    bad("--worker-memory-mb must be >= 0 MiB (0: every model fits; got " + number_text(worker_memory_mb) + ")");
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
  const auto start = std::chrono::steady_clock::now();
  const LoadReport r = compile_load(profiles_, spec, p.load_qps, solver_);
  return Expectation{r.expected_accuracy, r.expected_violation_rate, r.beyond_capacity,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
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
  // Like a sweep: independent solves, one thread each (run_sweep says why).
  parallel_for_each(n, n > 1 && solver_.concurrent_solves() && !omp_in_parallel(),
                    [&](int i) { solved[i] = solve(missing[i]); });
  std::lock_guard<std::mutex> lock(mutex_);
  for (int i = 0; i < n; ++i) cache_[missing[i]] = solved[i];
  std::vector<Expectation> out;
  out.reserve(points.size());
  for (const auto& p : points) out.push_back(cache_.at(p));
  return out;
}

}  // namespace lull::compiler
