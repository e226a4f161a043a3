#include "compiler/plan/worker_search.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "schema/number_text.h"

namespace lull::compiler {
namespace {

// Probes per round: one per thread the solver can use at once.
int probes_per_round(ExpectationCache& cache) {
  (void)cache;
  return std::max(1, std::min(8, omp_get_max_threads()));
}

// The smallest worker count that meets the target at `load` (capacity alone
// rules out the counts below it), or 0 when none would be by capacity.
int capacity_floor(const ExpectationCache& cache, double load, int max_workers) {
  const double per_worker = cache.capacity_qps(1);
  int k = std::max(1, static_cast<int>(std::ceil(load / per_worker)));
  while (k > 1 && cache.capacity_qps(k - 1) >= load) --k;  // guard against rounding
  while (k <= max_workers && cache.capacity_qps(k) < load) ++k;
  return k;
}

}  // namespace

std::string describe(const Expectation& e) {
  if (e.beyond_capacity) return "beyond the fastest model's capacity";
  char buf[96];
  std::snprintf(buf, sizeof buf, "expected violation %.4f, accuracy %.4f", e.violation_rate, e.accuracy);
  return buf;
}

WorkerChoice fewest_workers(ExpectationCache& cache, double load, const PlanTarget& target, int max_workers,
                            int known_short, int known_enough) {
  const int floor_k = capacity_floor(cache, load, max_workers);
  const std::string at = " at " + number_text(load) + " QPS";
  if (floor_k > max_workers)
    throw PlanError("no worker count up to " + std::to_string(max_workers) + " meets the target" + at +
                    ": even " + std::to_string(max_workers) + " workers are beyond the fastest model's capacity (" +
                    number_text(cache.capacity_qps(max_workers)) + " QPS)");
  int lo = std::max(known_short, floor_k - 1);  // does not meet (0: below every count)
  int hi = known_enough > lo ? std::min(known_enough, max_workers) : 0;  // meets (0: not found yet)
  // Find a count that meets the target: grow by half each round; stop when
  // more workers no longer change the expectations (the target is out of reach).
  Expectation last{};
  bool have_last = false;
  while (hi == 0) {
    const int probe = std::min(max_workers, std::max(lo + 1, lo == 0 ? floor_k : lo + std::max(1, lo / 2)));
    const Expectation e = cache.at(probe, load);
    if (meets(e, target)) {
      hi = probe;
      break;
    }
    const bool flat = have_last && std::abs(e.accuracy - last.accuracy) < 1e-9 &&
                      std::abs(e.violation_rate - last.violation_rate) < 1e-12;
    if (probe == max_workers || flat)
      throw PlanError("no worker count up to " + std::to_string(max_workers) + " meets the target" + at +
                      " (violation <= " + number_text(target.max_violation) +
                      (target.min_accuracy > 0 ? ", accuracy >= " + number_text(target.min_accuracy) : "") +
                      "): the largest tried, " + std::to_string(probe) + " workers, has " + describe(e) +
                      (flat ? " (more workers no longer change it)" : ""));
    lo = probe;
    last = e;
    have_last = true;
  }
  // k-ary bisection: lo does not meet, hi meets.
  const int probes = probes_per_round(cache);
  while (hi - lo > 1) {
    std::vector<PlanPoint> points;
    const int t = std::min(probes, hi - lo - 1);
    for (int i = 1; i <= t; ++i) {
      const int k = lo + static_cast<int>(static_cast<long long>(hi - lo) * i / (t + 1));
      if (k > lo && k < hi && (points.empty() || points.back().workers != k)) points.push_back({k, load});
    }
    const auto es = cache.at(points);
    int new_lo = lo, new_hi = hi;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (meets(es[i], target)) {
        new_hi = points[i].workers;
        break;
      }
      new_lo = points[i].workers;
    }
    lo = new_lo;
    hi = new_hi;
  }
  return WorkerChoice{load, hi, cache.at(hi, load)};
}

std::vector<WorkerChoice> fewest_workers_for_loads(ExpectationCache& cache, const std::vector<double>& loads_qps,
                                                   const PlanTarget& target, int max_workers) {
  std::vector<double> sorted = loads_qps;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<int> k(sorted.size(), 0);
  // Divide and conquer over the sorted loads: K(load) is non-decreasing, so a
  // load between two that need the same count needs that count.
  auto solve = [&](auto&& self, int i, int j, int short_k, int enough_k) -> void {
    if (i > j) return;
    if (enough_k > 0 && enough_k == short_k + 1) {
      for (int x = i; x <= j; ++x) k[x] = enough_k;
      return;
    }
    const int m = (i + j) / 2;
    k[m] = fewest_workers(cache, sorted[m], target, max_workers, short_k, enough_k).workers;
    self(self, i, m - 1, short_k, k[m]);
    self(self, m + 1, j, k[m] - 1, enough_k);
  };
  solve(solve, 0, static_cast<int>(sorted.size()) - 1, 0, 0);
  std::map<double, int> by_load;
  for (std::size_t x = 0; x < sorted.size(); ++x) by_load[sorted[x]] = k[x];
  std::vector<PlanPoint> points;
  for (double l : loads_qps) points.push_back({by_load[l], l});
  const auto es = cache.at(points);
  std::vector<WorkerChoice> out;
  for (std::size_t x = 0; x < loads_qps.size(); ++x) out.push_back({loads_qps[x], points[x].workers, es[x]});
  return out;
}

std::vector<CapacityRow> capacity_table(ExpectationCache& cache, const std::vector<int>& workers,
                                        const PlanTarget& target) {
  struct Search {
    int workers;
    double lo, hi;  // lo meets (or 0), hi does not (or capacity)
  };
  std::vector<Search> searches;
  const auto known = cache.known();
  for (int k : workers) {
    Search s{k, 0, cache.capacity_qps(k)};
    // Monotonicity: (K' <= K, L) meeting means K meets L; (K' >= K, L) short means K is short at L.
    for (const auto& [p, e] : known) {
      if (p.workers <= k && meets(e, target)) s.lo = std::max(s.lo, p.load_qps);
      if (p.workers >= k && !meets(e, target)) s.hi = std::min(s.hi, p.load_qps);
    }
    if (s.hi < s.lo) s.hi = s.lo;  // the cache contradicts monotonicity: trust what meets
    searches.push_back(s);
  }
  auto done = [](const Search& s) { return s.hi - s.lo <= std::max(1.0, 0.005 * s.hi); };
  const int probes = probes_per_round(cache);
  for (;;) {
    std::vector<PlanPoint> points;
    std::vector<int> owner;
    int open = 0;
    for (const auto& s : searches) open += done(s) ? 0 : 1;
    if (open == 0) break;
    const int per = std::max(1, probes / open);
    for (std::size_t i = 0; i < searches.size(); ++i) {
      const Search& s = searches[i];
      if (done(s)) continue;
      for (int q = 1; q <= per; ++q) {
        points.push_back({s.workers, s.lo + (s.hi - s.lo) * q / (per + 1)});
        owner.push_back(static_cast<int>(i));
      }
    }
    const auto es = cache.at(points);
    // Points of one search are ascending: the last that meets raises lo, the first that does not lowers hi.
    for (std::size_t x = 0; x < points.size(); ++x) {
      Search& s = searches[static_cast<std::size_t>(owner[x])];
      if (meets(es[x], target)) s.lo = std::max(s.lo, points[x].load_qps);
      else s.hi = std::min(s.hi, points[x].load_qps);
    }
  }
  std::vector<CapacityRow> rows;
  std::vector<PlanPoint> at;
  for (const auto& s : searches) {
    rows.push_back({s.workers, s.lo, {}});
    if (s.lo > 0) at.push_back({s.workers, s.lo});
  }
  const auto es = cache.at(at);
  std::size_t x = 0;
  for (auto& r : rows)
    if (r.max_load_qps > 0) r.expected = es[x++];
  return rows;
}

}  // namespace lull::compiler
