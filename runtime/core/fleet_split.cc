#include "runtime/core/fleet_split.h"

#include <algorithm>
#include <cmath>

#include "schema/model_capacity.h"
#include "schema/split_search.h"

namespace lull::core {
namespace {

// The set for `workers` workers (the Poisson one where a library holds several patterns).
const PolicyTable* set_for(const FleetKindTables& kind, int workers) {
  const PolicyTable* found = nullptr;
  for (const auto& t : kind.library)
    if (t.workers == workers && (found == nullptr || (t.arrivals.is_poisson() && !found->arrivals.is_poisson())))
      found = &t;
  return found;
}

// The policy compiled at `load_qps` (the compile's own number, up to rounding); null if none.
const CompiledPolicy* policy_at(const PolicyTable& t, double load_qps) {
  const auto it = std::lower_bound(t.policies.begin(), t.policies.end(), load_qps * (1 - 1e-9),
                                   [](const CompiledPolicy& p, double l) { return p.load_qps < l; });
  if (it == t.policies.end() || it->load_qps > load_qps * (1 + 1e-9)) return nullptr;
  return &*it;
}

// A load above the fastest model's throughput is beyond capacity (as the
// compiler marks it), never chosen while another split is within it.
double capacity_qps(const PolicyTable& t, int max_queue) {
  return fastest_model_capacity_qps(t.models.front().latency_us, max_queue, t.workers);
}

bool grid_compiled(const FleetClassTables& cls, int steps) {
  for (const auto& kind : cls.kinds) {
    const PolicyTable* t = set_for(kind, kind.workers);
    if (t == nullptr) return false;
    for (const auto& sp : cls.splits)
      for (int s = 1; s <= steps; ++s)
        if (policy_at(*t, kind_load(sp.load_qps, static_cast<double>(s) / steps)) == nullptr) return false;
  }
  return true;
}

}  // namespace

int compiled_weight_steps(const FleetClassTables& cls) {
  if (cls.kinds.size() < 2) return 0;
  for (int n = 1000; n >= 2; --n)
    if (grid_compiled(cls, n)) return n;
  return 0;
}

ClassResplit resplit_for_counts(const FleetClassTables& cls, const std::vector<int>& counts) {
  ClassResplit out;
  out.splits = cls.splits;
  bool same = counts.size() == cls.kinds.size();
  for (std::size_t k = 0; same && k < counts.size(); ++k) same = counts[k] == cls.kinds[k].workers;
  if (same) return out;
  if (counts.size() != cls.kinds.size()) {
    out.fallback = "one count per kind needed";
    return out;
  }
  const int steps = compiled_weight_steps(cls);
  if (steps == 0) {
    out.fallback = "its weights were fixed (no weight grid compiled)";
    return out;
  }
  std::vector<const PolicyTable*> sets(counts.size(), nullptr);
  bool any_up = false;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] <= 0) continue;
    any_up = true;
    sets[k] = set_for(cls.kinds[k], counts[k]);
    if (sets[k] == nullptr) {
      out.fallback = "kind '" + cls.kinds[k].kind + "' has no policies for " + std::to_string(counts[k]) +
                     " workers (compile with --count-spread)";
      return out;
    }
  }
  if (!any_up) {
    out.fallback = "no worker is up";
    return out;
  }
  // Splits that send queries to a kind with no worker up are not candidates.
  std::vector<std::vector<double>> grid;
  for (auto& w : weight_grid(static_cast<int>(counts.size()), steps)) {
    bool ok = true;
    for (std::size_t k = 0; ok && k < w.size(); ++k) ok = w[k] == 0 || counts[k] > 0;
    if (ok) grid.push_back(std::move(w));
  }
  const KindExpectation expectation = [&](int k, double load) {
    Expectation e;
    const PolicyTable* t = sets[static_cast<std::size_t>(k)];
    // No worker up (the file's weights on these counts), or not a load of the grid.
    const CompiledPolicy* p = t == nullptr ? nullptr : policy_at(*t, load);
    if (p == nullptr) {
      e.beyond_capacity = true;
      e.violation_rate = 1;
      return e;
    }
    e.accuracy = p->expected_accuracy;
    e.violation_rate = p->expected_violation_rate;
    e.beyond_capacity = load > capacity_qps(*t, p->max_queue);
    return e;
  };
  const PlanTarget target{cls.max_violation, 0};
  for (auto& sp : out.splits) {
    const ClassSplit kept = split_at(sp.weights, sp.load_qps, target, expectation);
    out.file_weights.push_back({sp.load_qps, sp.weights, kept.expected.accuracy, kept.expected.violation_rate});
    const ClassSplit best = best_split(grid, sp.load_qps, target, expectation);
    sp.weights = best.weights;
    sp.accuracy = best.expected.accuracy;
    sp.violation_rate = best.expected.violation_rate;
  }
  out.searched = true;
  return out;
}

}  // namespace lull::core
