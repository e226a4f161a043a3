#include "compiler/plan/worker_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "schema/number_text.h"

namespace lull::compiler {
namespace {

constexpr double kLoadStep = 0.02;  // capacity tolerance: 2% of the load (at least 1 QPS)
constexpr double kWalkFloor = 0.9;  // a capacity or a planned load: the grid loads from 0.9 x it up meet too

// The smallest count whose fastest-model capacity reaches `load` (counts
// below it are never planned); max_workers + 1 when none does.
int capacity_floor(const ExpectationCache& cache, double load, int max_workers) {
  int k = std::max(1, static_cast<int>(std::ceil(load / cache.capacity_qps(1))));
  while (k > 1 && cache.capacity_qps(k - 1) >= load) --k;  // guard against rounding
  while (k <= max_workers && cache.capacity_qps(k) < load) ++k;
  return k;
}

// One search for the fewest workers at a load. lo: a count known short of the
// target (by a probe, or by capacity: `lo_probed` false); hi: a count known
// to meet it (0: none yet).
struct WorkerSearch {
  double load = 0;
  int lo = 0, hi = 0, guess = 0, step = 1;
  int floor_lo = 0;      // below the fastest model's capacity from here down
  int checked = 0;       // the hi whose pocket check ran
  int cross = 0;         // a lower count that a busier load was planned with: try it here too
  int pocket_depth = 4;  // the pocket check probes K-2, K-4, ... down to K-pocket_depth
  bool started = false, lo_probed = false, pocket = false;
  std::vector<int> probes;
  bool converged() const { return hi > 0 && hi - lo == 1; }
  bool done() const { return converged() && checked == hi && cross == 0; }
};

void add_probe(WorkerSearch& s, int k, int max_workers) {
  k = std::min(k, max_workers);
  if (k > s.lo && (s.hi == 0 || k < s.hi) && std::find(s.probes.begin(), s.probes.end(), k) == s.probes.end())
    s.probes.push_back(k);
}

void plan_probes(WorkerSearch& s, int max_workers) {
  s.probes.clear();
  s.pocket = false;
  if (s.converged()) {  // K meets, K-1 does not: look for a lower pocket that meets (K-2, K-4, a busier load's K)
    s.pocket = true;
    if (s.checked != s.hi) {
      s.checked = s.hi;
      for (int d = 2; d <= s.pocket_depth; d += 2)
        if (s.hi - d > s.floor_lo) s.probes.push_back(s.hi - d);
    }
    if (s.cross > s.floor_lo && s.cross < s.hi &&
        std::find(s.probes.begin(), s.probes.end(), s.cross) == s.probes.end())
      s.probes.push_back(s.cross);
    s.cross = 0;
    return;
  }
  if (!s.started) {  // the guess and the count below it: done in one round when the guess is right
    s.started = true;
    const int g = std::clamp(s.guess, s.lo + 2, std::max(s.lo + 2, max_workers));
    add_probe(s, g - 1, max_workers);
    add_probe(s, g, max_workers);
  } else if (s.hi == 0) {  // gallop up
    add_probe(s, s.lo + s.step, max_workers);
    add_probe(s, s.lo + 2 * s.step, max_workers);
    s.step *= 2;
  } else if (!s.lo_probed && s.hi - s.lo > 3) {  // gallop down from a count that meets
    add_probe(s, s.hi - s.step, max_workers);
    add_probe(s, s.hi - 2 * s.step, max_workers);
    s.step *= 2;
  } else {  // bisect: two interior points
    const int gap = s.hi - s.lo;
    add_probe(s, s.lo + std::max(1, gap / 3), max_workers);
    add_probe(s, s.lo + std::max(1, 2 * gap / 3), max_workers);
  }
}

// The loads below `load` a count carrying it must also meet (worker_search.h).
std::vector<double> loads_below(double load) {
  std::vector<double> out;
  for (double l = load / (1 + kLoadStep); l >= kWalkFloor * load && l >= 1; l /= 1 + kLoadStep) out.push_back(l);
  return out;
}

// One capacity search: lo meets (0: none found), hi does not (at first the
// capacity: beyond it is never planned); `step`: the gallop's while one side
// is unprobed.
struct LoadSearch {
  int workers = 0;
  double lo = 0, hi = 0, guess = 0, step = kLoadStep;
  bool started = false, hi_probed = false;
  std::vector<double> probes;
  bool done() const { return hi <= 1 || (lo > 0 && hi - lo <= std::max(1.0, kLoadStep * lo) && hi_probed); }
};

// The bracket search finds A boundary; the capacity is the first crossing
// (worker_search.h). Each search walks down from lo on lo's grid to
// kWalkFloor x the capacity, a few points per round: at a load that misses,
// the capacity drops to the grid point below it (hi: the one that missed)
// and the walk goes on from there.
void first_crossing(ExpectationCache& cache, std::vector<LoadSearch>& searches, const PlanTarget& target) {
  constexpr int kPerRound = 6;  // points per search per round: the walk covers about 11
  struct Walk {
    double top = 0;           // the grid's anchor: lo as the bracket search found it
    int next = 1;             // the next grid point: top / (1 + kLoadStep)^next
    bool lo_pending = false;  // the last point missed: lo is the next one that meets
  };
  std::vector<Walk> walks(searches.size());
  for (std::size_t i = 0; i < searches.size(); ++i) walks[i].top = searches[i].lo;
  const auto grid = [](const Walk& w, int n) { return w.top / std::pow(1 + kLoadStep, n); };
  const auto open = [&](std::size_t i) {
    const Walk& w = walks[i];
    const double l = grid(w, w.next);
    return w.top > 0 && l >= 1 && (w.lo_pending || l >= searches[i].lo * kWalkFloor);
  };
  for (;;) {
    std::vector<PlanPoint> points;
    std::vector<int> added(searches.size(), 0);
    for (std::size_t i = 0; i < searches.size(); ++i)
      if (open(i))
        for (int n = 0; n < kPerRound; ++n, ++added[i]) {
          const double l = grid(walks[i], walks[i].next + n);
          if (l < 1 || (!walks[i].lo_pending && l < searches[i].lo * kWalkFloor)) break;
          points.push_back({searches[i].workers, l});
        }
    if (points.empty()) break;
    const auto es = cache.at(points);
    std::size_t x = 0;
    for (std::size_t i = 0; i < searches.size(); ++i) {
      LoadSearch& s = searches[i];
      Walk& w = walks[i];
      for (int n = 0; n < added[i]; ++n, ++x, ++w.next) {
        if (!meets(es[x], target)) {
          s.hi = points[x].load_qps;
          w.lo_pending = true;
        } else if (w.lo_pending) {
          s.lo = points[x].load_qps;
          w.lo_pending = false;
        }
      }
      if (w.lo_pending && !open(i)) s.lo = 0;  // no grid load down to 1 QPS meets
    }
  }
}

std::string unattainable(double load, const PlanTarget& target, int max_workers, int tried, const Expectation& e,
                         bool flat) {
  return "no worker count up to " + std::to_string(max_workers) + " meets the target at " + number_text(load) +
         " QPS (expected violation <= " + number_text(target.max_violation) +
         (target.min_accuracy > 0 ? ", accuracy >= " + number_text(target.min_accuracy) : "") +
         "): the largest tried, " + std::to_string(tried) + " workers, has " + describe(e) +
         (flat ? " (more workers no longer change it)" : "");
}

}  // namespace

bool carries(ExpectationCache& cache, int workers, double load, const PlanTarget& target) {
  if (!meets(cache.at(workers, load), target)) return false;
  std::vector<PlanPoint> p;
  for (double l : loads_below(load)) p.push_back({workers, l});
  for (const Expectation& e : cache.at(p))
    if (!meets(e, target)) return false;
  return true;
}

std::string describe(const Expectation& e) {
  if (e.beyond_capacity) return "a load beyond the fastest model's capacity";
  char buf[96];
  std::snprintf(buf, sizeof buf, "expected violation %.4f, accuracy %.4f", e.violation_rate, e.accuracy);
  return buf;
}

std::vector<WorkerChoice> fewest_workers_for_loads(ExpectationCache& cache, const std::vector<double>& loads_qps,
                                                   const PlanTarget& target, int max_workers, double workers_per_qps,
                                                   int pocket_depth) {
  if (!(workers_per_qps > 0)) workers_per_qps = 1.5 / cache.capacity_qps(1);
  std::map<double, WorkerSearch> searches;  // one per distinct load
  for (double load : loads_qps) {
    if (searches.count(load)) continue;
    WorkerSearch s;
    s.load = load;
    const int floor_k = capacity_floor(cache, load, max_workers);
    if (floor_k > max_workers)
      throw PlanError("no worker count up to " + std::to_string(max_workers) + " meets the target at " +
                      number_text(load) + " QPS: " + std::to_string(max_workers) +
                      " workers are beyond the fastest model's capacity (" +
                      number_text(cache.capacity_qps(max_workers)) + " QPS)");
    s.lo = s.floor_lo = floor_k - 1;
    s.pocket_depth = pocket_depth;
    s.guess = std::max(floor_k, static_cast<int>(std::ceil(load * workers_per_qps)));
    searches[load] = s;
  }
  std::map<double, Expectation> last_top;  // gallop up: the largest count's expectations last round
  // Rounds until every search is done; then, where a busier load was planned
  // with fewer workers than a quieter one, the quieter one tries that count
  // too (a pocket check), and the rounds go on. Three passes at most.
  for (int pass = 0; pass < 3; ++pass) {
    if (pass > 0) {
      bool any = false;
      int fewest_above = 0;  // the fewest workers planned for this load or a busier one
      for (auto it = searches.rbegin(); it != searches.rend(); ++it) {
        WorkerSearch& s = it->second;
        if (fewest_above > 0 && fewest_above < s.hi) {
          s.cross = fewest_above;
          any = true;
        }
        fewest_above = fewest_above == 0 ? s.hi : std::min(fewest_above, s.hi);
      }
      if (!any) break;
    }
    for (;;) {
      std::vector<PlanPoint> points;
      for (auto& [load, s] : searches) {
        s.probes.clear();
        if (s.done()) continue;
        plan_probes(s, max_workers);
        for (int k : s.probes) points.push_back({k, load});
      }
      if (points.empty()) break;
      // Solves the round in parallel: the probes, then the loads below the
      // load for each search's fewest probed count that meets it (the only
      // one that can become hi this round).
      const auto at_load = cache.at(points);
      std::vector<PlanPoint> below;
      std::map<double, int> verify;  // per load: the count whose loads below are solved
      for (std::size_t i = 0; i < points.size(); ++i)
        if (meets(at_load[i], target)) {
          auto [it, fresh] = verify.emplace(points[i].load_qps, points[i].workers);
          if (!fresh && it->second < points[i].workers) continue;
          it->second = points[i].workers;
        }
      for (const auto& [load, k] : verify)
        for (double l : loads_below(load)) below.push_back({k, l});
      cache.at(below);
      for (auto& [load, s] : searches) {
        if (s.probes.empty()) continue;
        std::sort(s.probes.begin(), s.probes.end());
        const auto es = cache.at([&] {
          std::vector<PlanPoint> p;
          for (int k : s.probes) p.push_back({k, load});
          return p;
        }());
        // 1: the probe carries the load; 0: it does not; -1: it meets the
        // load, its loads below are not solved yet (a later round's).
        std::vector<int> ok;
        const auto v = verify.find(load);
        for (std::size_t i = 0; i < s.probes.size(); ++i)
          ok.push_back(!meets(es[i], target)                           ? 0
                       : v != verify.end() && v->second == s.probes[i] ? carries(cache, s.probes[i], load, target)
                                                                       : -1);
        if (s.pocket) {  // a lower count that carries the load: search again below it
          const auto m = std::find(ok.begin(), ok.end(), 1);
          if (m != ok.end()) {
            const std::size_t i = static_cast<std::size_t>(m - ok.begin());
            s.hi = s.probes[i];
            s.lo = i > 0 ? s.probes[i - 1] : s.floor_lo;
            s.lo_probed = i > 0;
            s.step = 1;
          }
          continue;
        }
        for (std::size_t i = 0; i < s.probes.size(); ++i)
          if (ok[i] == 1 && (s.hi == 0 || s.probes[i] < s.hi)) {
            s.hi = s.probes[i];
            break;
          }
        for (std::size_t i = 0; i < s.probes.size(); ++i)
          if (ok[i] == 0 && s.probes[i] > s.lo && (s.hi == 0 || s.probes[i] < s.hi)) {
            s.lo = s.probes[i];
            s.lo_probed = true;
          }
        if (s.hi == 0) {
          const int top = s.probes.back();
          const Expectation& e = es.back();
          const auto prev = last_top.find(load);
          const bool flat = prev != last_top.end() && std::abs(e.accuracy - prev->second.accuracy) < 1e-9 &&
                            std::abs(e.violation_rate - prev->second.violation_rate) < 1e-12;
          if (ok.back() == 0 && (top >= max_workers || flat))
            throw PlanError(unattainable(load, target, max_workers, top, e, flat));
          last_top[load] = e;
        } else if (!s.lo_probed && s.hi - s.lo <= 3) {
          s.lo_probed = true;  // close enough to bisect
        }
      }
    }
  }
  std::vector<PlanPoint> answer;
  for (double load : loads_qps) answer.push_back({searches[load].hi, load});
  const auto es = cache.at(answer);
  std::vector<WorkerChoice> out;
  for (std::size_t i = 0; i < answer.size(); ++i) out.push_back({loads_qps[i], answer[i].workers, es[i]});
  return out;
}

WorkerChoice fewest_workers(ExpectationCache& cache, double load_qps, const PlanTarget& target, int max_workers,
                            double workers_per_qps) {
  return fewest_workers_for_loads(cache, {load_qps}, target, max_workers, workers_per_qps, 8).front();
}

std::vector<CapacityRow> capacity_table(ExpectationCache& cache, const std::vector<int>& workers,
                                        const PlanTarget& target, double qps_per_worker) {
  if (!(qps_per_worker > 0)) qps_per_worker = cache.capacity_qps(1) / 1.5;
  std::vector<LoadSearch> searches;
  for (int k : workers) {
    LoadSearch s;
    s.workers = k;
    s.hi = cache.capacity_qps(k) * (1 + 1e-9);
    s.guess = std::min(s.hi / (1 + kLoadStep), k * qps_per_worker);
    searches.push_back(s);
  }
  for (;;) {
    std::vector<PlanPoint> points;
    for (auto& s : searches) {
      s.probes.clear();
      if (s.done()) continue;
      const auto add = [&](double l) {
        if (l > s.lo && l < s.hi && l >= 1) s.probes.push_back(l);
      };
      if (!s.started) {
        s.started = true;
        add(s.guess);
        add(s.guess * (1 + kLoadStep));
      } else if (s.lo == 0) {  // gallop down
        add(s.hi / (1 + s.step));
        add(s.hi / (1 + 2 * s.step));
        s.step *= 2;
      } else if (!s.hi_probed) {  // gallop up, below the capacity
        add(s.lo * (1 + s.step));
        add(s.lo * (1 + 2 * s.step));
        if (s.probes.empty()) add((s.lo + s.hi) / 2);
        s.step *= 2;
      } else {
        add(s.lo + (s.hi - s.lo) / 3);
        add(s.lo + 2 * (s.hi - s.lo) / 3);
      }
      if (s.probes.empty()) {  // nothing left between lo and hi
        s.hi_probed = true;
        if (s.lo == 0) s.hi = 0;
      }
      for (double l : s.probes) points.push_back({s.workers, l});
    }
    if (points.empty()) break;
    cache.at(points);
    for (auto& s : searches) {
      if (s.probes.empty()) continue;
      std::sort(s.probes.begin(), s.probes.end());
      std::vector<PlanPoint> p;
      for (double l : s.probes) p.push_back({s.workers, l});
      const auto es = cache.at(p);
      for (std::size_t i = s.probes.size(); i-- > 0;)
        if (meets(es[i], target) && s.probes[i] > s.lo) {
          s.lo = s.probes[i];
          break;
        }
      for (std::size_t i = 0; i < s.probes.size(); ++i)
        if (!meets(es[i], target) && s.probes[i] > s.lo && s.probes[i] < s.hi) {
          s.hi = s.probes[i];
          s.hi_probed = true;
          break;
        }
    }
  }
  first_crossing(cache, searches, target);
  std::vector<CapacityRow> rows;
  std::vector<PlanPoint> at;
  for (const auto& s : searches) {
    rows.push_back({s.workers, s.lo, s.hi, {}});
    if (s.lo > 0) at.push_back({s.workers, s.lo});
  }
  const auto es = cache.at(at);
  std::size_t x = 0;
  for (auto& r : rows)
    if (r.max_load_qps > 0) r.expected = es[x++];
  return rows;
}

}  // namespace lull::compiler
