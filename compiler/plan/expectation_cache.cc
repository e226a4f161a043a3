#include "compiler/plan/expectation_cache.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "compiler/compile_sweep.h"
#include "compiler/mdp/arrival_model.h"
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

ExpectationCache::ExpectationCache(ReducedProfiles profiles, CompileSpec spec, Solver& solver,
                                   std::shared_ptr<CappedSolves> capped)
    : profiles_(std::move(profiles)),
      spec_(std::move(spec)),
      solver_(solver),
      capped_(capped ? std::move(capped) : std::make_shared<CappedSolves>()) {}

namespace {

double lattice_load(long n) { return std::pow(1.02, static_cast<double>(n) / kCapLatticeSteps); }

}  // namespace

bool ExpectationCache::is_capped(int workers) const {
  return spec_.mdp.phase_cap > 0 && arrival_model(spec_.mdp.arrivals, workers, 1, spec_.mdp.phase_cap).capped_from > 0;
}

ExpectationCache::Key ExpectationCache::key_of(const PlanPoint& p) const {
  Key k;
  k.point = p;
  if (spec_.mdp.phase_cap <= 0) return k;
  const ArrivalModel m = arrival_model(spec_.mdp.arrivals, p.workers, p.load_qps, spec_.mdp.phase_cap);
  if (m.capped_from == 0) return k;
  k.capped = true;
  k.point = {};
  k.dispersion = m.dispersion;
  // The capped problem's load (QPS at cap workers), rounded up to the lattice;
  // the tolerance keeps a 2%-grid load below a lattice point on its own point.
  const double load = m.rate_per_us * 1e6;
  const double x = std::log(load) / std::log(1.02) * kCapLatticeSteps;
  k.lattice = static_cast<long>(std::ceil(x - 1e-6));
  return k;
}

double ExpectationCache::capacity_qps(int workers) const {
  return compiler::capacity_qps(profiles_, workers, spec_.mdp.max_queue);
}

std::size_t ExpectationCache::solves() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiled_;
}

std::map<PlanPoint, Expectation> ExpectationCache::known() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_;
}

bool ExpectationCache::cached(const Key& k) const {
  if (!k.capped) return cache_.count(k.point) > 0;
  std::lock_guard<std::mutex> lock(capped_->mutex);
  return capped_->solved.count({k.dispersion, k.lattice}) > 0;
}

Expectation ExpectationCache::solve(const Key& k) {
  CompileSpec spec = spec_;
  spec.mdp.workers = k.point.workers;
  double load = k.point.load_qps;
  if (k.capped) {  // cap workers, exact, at the lattice load
    spec.mdp.workers = spec_.mdp.phase_cap;
    spec.mdp.phase_cap = 0;
    spec.mdp.arrivals = k.dispersion == 1 ? ArrivalProcess::poisson() : ArrivalProcess::batch(k.dispersion);
    load = lattice_load(k.lattice);
  }
  const auto start = std::chrono::steady_clock::now();
  const LoadReport r = compile_load(profiles_, spec, load, solver_);
  return Expectation{r.expected_accuracy, r.expected_violation_rate, r.beyond_capacity,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

std::vector<Expectation> ExpectationCache::at(const std::vector<PlanPoint>& points) {
  std::vector<Key> keys, missing;
  for (const auto& p : points) keys.push_back(key_of(p));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& k : keys)
      if (!cached(k) && std::find(missing.begin(), missing.end(), k) == missing.end()) missing.push_back(k);
  }
  const int n = static_cast<int>(missing.size());
  std::vector<Expectation> solved(missing.size());
  // Like a sweep: independent solves, one thread each (run_sweep says why).
  parallel_for_each(n, n > 1 && solver_.concurrent_solves() && !omp_in_parallel(),
                    [&](int i) { solved[i] = solve(missing[i]); });
  std::lock_guard<std::mutex> lock(mutex_);
  std::lock_guard<std::mutex> capped_lock(capped_->mutex);
  compiled_ += missing.size();
  for (int i = 0; i < n; ++i) {
    const Key& k = missing[i];
    if (k.capped)
      capped_->solved[{k.dispersion, k.lattice}] = solved[i];
    else
      cache_[k.point] = solved[i];
  }
  std::vector<Expectation> out;
  out.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Key& k = keys[i];
    const Expectation& e = k.capped ? capped_->solved.at({k.dispersion, k.lattice}) : cache_.at(k.point);
    cache_[points[i]] = e;  // known() lists every point asked for
    out.push_back(e);
  }
  return out;
}

}  // namespace lull::compiler
