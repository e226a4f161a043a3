#include "runtime/core/policy_catalog.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/core/pattern_switcher.h"
#include "schema/input_limits.h"

namespace lull::core {

PolicyCatalog::PolicyCatalog(std::vector<PolicyTable> library) {
  if (library.empty()) throw std::invalid_argument("policy library holds no policy set");
  header_ = library.front();
  header_.policies.clear();
  header_.workers = 0;
  grid_qps_ = library.front().loads_qps();
  step_qps_ = grid_qps_.size() >= 2 ? grid_qps_.back() - grid_qps_[grid_qps_.size() - 2] : grid_qps_.back();
  for (const auto& t : library) {
    if (t.arrivals.kind == ArrivalProcess::Kind::kUniform)
      throw std::invalid_argument("policy set for " + std::to_string(t.workers) +
                                  " workers: arrivals 'uniform' has no MDP");
    if (const auto it = by_workers_.find(t.workers); it != by_workers_.end())
      for (const auto& p : it->second)
        if (p.arrivals == t.arrivals)
          throw std::invalid_argument("policy library holds two sets for " + std::to_string(t.workers) +
                                      " workers and arrivals " + arrival_process_text(t.arrivals));
    add(t);
  }
}

std::vector<PolicyCatalog::Slot>& PolicyCatalog::slots_for(const PolicyTable& t) {
  WorkerSets& sets = by_workers_[t.workers];
  for (auto& p : sets)
    if (p.arrivals == t.arrivals) return p.slots;
  if (std::none_of(patterns_.begin(), patterns_.end(), [&](const ArrivalProcess& p) { return p == t.arrivals; }))
    patterns_.push_back(t.arrivals);
  sets.push_back(PatternSlots{t.arrivals, {}});
  return sets.back().slots;
}

void PolicyCatalog::check_compatible(const PolicyTable& t, const std::string& what) const {
  auto fail = [&](const std::string& why) { throw std::invalid_argument(what + ": " + why); };
  if (t.task != header_.task) fail("task '" + t.task + "' differs from the library's '" + header_.task + "'");
  if (t.slo_us != header_.slo_us) fail("SLO differs from the library's");
  if (t.models.size() != header_.models.size()) fail("model list differs from the library's");
  for (std::size_t m = 0; m < t.models.size(); ++m)
    if (t.models[m].name != header_.models[m].name || t.models[m].accuracy != header_.models[m].accuracy)
      fail("models[" + std::to_string(m) + "] (" + t.models[m].name + ") differs from the library's");
  if (t.policies.empty()) fail("holds no policy");
}

void PolicyCatalog::add(const PolicyTable& t) {
  check_compatible(t, "policy set for " + std::to_string(t.workers) + " workers");
  auto& slots = slots_for(t);
  for (const auto& p : t.policies) {
    const auto it = std::lower_bound(slots.begin(), slots.end(), p.load_qps,
                                     [](const Slot& s, double l) { return s.load_qps < l; });
    if (it != slots.end() && it->load_qps == p.load_qps) continue;
    const int id = size();
    auto owned = std::make_unique<const CompiledPolicy>(p);
    by_id_.push_back(PolicyChoice{owned.get(), t.workers, id, t.arrivals});
    slots.insert(it, Slot{p.load_qps, std::move(owned), id});
  }
}

void PolicyCatalog::replace(const PolicyTable& t) {
  check_compatible(t, "replacement policy set for " + std::to_string(t.workers) + " workers");
  for (std::size_t m = 0; m < t.models.size(); ++m)
    if (t.models[m].latency_us.empty())
      throw std::invalid_argument("replacement policy set: models[" + std::to_string(m) + "] has no latencies");
  auto& slots = slots_for(t);
  for (Slot& s : slots) retired_.push_back(std::move(s.policy));
  slots.clear();
  ++generation_;
  add(t);
  for (std::size_t m = 0; m < t.models.size(); ++m) header_.models[m].latency_us = t.models[m].latency_us;
}

const PolicyCatalog::PatternSlots& PolicyCatalog::for_pattern(const WorkerSets& sets, const ArrivalProcess& pattern) {
  if (sets.size() == 1) return sets.front();  // the common case: no choice, no allocation
  for (const auto& p : sets)
    if (p.arrivals == pattern) return p;
  return sets[covering_pattern(
      sets, [](const PatternSlots& p) -> const ArrivalProcess& { return p.arrivals; }, pattern)];
}

PolicyChoice PolicyCatalog::at_or_top(const PatternSlots& sets, int workers, double load_qps) {
  const auto& slots = sets.slots;
  auto it =
      std::lower_bound(slots.begin(), slots.end(), load_qps, [](const Slot& s, double l) { return s.load_qps < l; });
  if (it == slots.end()) --it;
  return PolicyChoice{it->policy.get(), workers, it->id, sets.arrivals};
}

PolicyChoice PolicyCatalog::choose(int workers_up, double load_qps, bool conservative,
                                   const ArrivalProcess& pattern) const {
  const auto above = by_workers_.upper_bound(workers_up);
  // The smallest larger worker count, at the load each of its workers would
  // see (without `conservative`: at the load itself, the stale policy).
  auto larger = [&] {
    const int k = above->first;
    const double equivalent = conservative && workers_up > 0 ? load_qps * k / workers_up : load_qps;
    return at_or_top(for_pattern(above->second, pattern), k, equivalent);
  };
  if (above == by_workers_.begin()) return larger();  // only larger worker counts
  const auto at_most = std::prev(above);              // workers_up or fewer
  const PolicyChoice choice = at_or_top(for_pattern(at_most->second, pattern), at_most->first, load_qps);
  if (!conservative || choice.policy->load_qps >= load_qps || above == by_workers_.end()) return choice;
  // It does not cover the load (a set compiled online for a few loads, or
  // above the grid): the larger set may expect more load per worker.
  const PolicyChoice other = larger();
  return other.policy->load_qps / other.workers > choice.policy->load_qps / choice.workers ? other : choice;
}

PolicyRequest PolicyCatalog::wanted(int workers_up, double load_qps, const ArrivalProcess& pattern) const {
  if (workers_up < 1) return {};
  double target = 0;
  const auto g = std::lower_bound(grid_qps_.begin(), grid_qps_.end(), load_qps);
  if (g != grid_qps_.end()) {
    target = *g;
  } else {
    // A load on a step takes that step, also when rounding puts it a hair
    // above (a shard's grid is the fleet's divided by G: runtime/core/shard.h).
    target = grid_qps_.back() + std::ceil((load_qps - grid_qps_.back()) / step_qps_ - 1e-9) * step_qps_;
    target = std::min(target, limits::kMaxLoadQps);
  }
  const auto it = by_workers_.find(workers_up);
  if (it != by_workers_.end()) {
    for (const auto& sets : it->second) {
      if (!(sets.arrivals == pattern)) continue;
      const auto& slots = sets.slots;
      const bool held = std::any_of(slots.begin(), slots.end(), [&](const Slot& s) { return s.load_qps == target; });
      // At the load limit a policy at or above the estimate is the best there is.
      if (held || (target < load_qps && slots.back().load_qps >= target)) return {};
    }
  }
  return PolicyRequest{workers_up, target, pattern};
}

std::vector<int> PolicyCatalog::worker_counts() const {
  std::vector<int> out;
  for (const auto& [k, slots] : by_workers_) out.push_back(k);
  return out;
}

}  // namespace lull::core
