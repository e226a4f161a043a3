// Capacity per compiled worker count from the library's expectations, and the
// two rules that pick a worker count for a load (why: see capacity_table.h).
#include "runtime/manager/capacity_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "runtime/core/pattern_switcher.h"
#include "schema/count_rule.h"

namespace lull::manager {

CapacityTable::CapacityTable(const std::vector<core::PolicyTable>& all_sets, CapacityTarget target,
                             const ArrivalProcess& pattern)
    : target_(target), pattern_(pattern) {
  if (all_sets.empty()) throw std::invalid_argument("capacity table: the policy library is empty");
  if (!(target.max_violation_rate > 0 && target.max_violation_rate < 1))
    throw std::invalid_argument("capacity table: the violation target must be in (0, 1)");
  if (!(target.min_accuracy >= 0 && target.min_accuracy < 1))
    throw std::invalid_argument("capacity table: the accuracy floor must be in [0, 1)");
  if (!(target.worker_price >= 0 && std::isfinite(target.worker_price)))
    throw std::invalid_argument("capacity table: the worker price must be finite and not negative");
  // One table per worker count (ascending): the one for the pattern.
  std::map<int, std::vector<const core::PolicyTable*>> by_workers;
  for (const auto& t : all_sets) by_workers[t.workers].push_back(&t);
  for (const auto& [workers, sets] : by_workers) {
    const auto& t = *sets[core::covering_pattern(
        sets, [](const core::PolicyTable* p) -> const ArrivalProcess& { return p->arrivals; }, pattern)];
    CapacityRow row;
    std::vector<GridFigures> curve;
    row.workers = t.workers;
    bool qualifying = true;
    for (const auto& p : t.policies) {  // ascending load
      curve.push_back({p.load_qps, p.expected_accuracy, p.expected_violation_rate});
      if (p.expected_violation_rate > target.max_violation_rate || p.expected_accuracy < target.min_accuracy)
        qualifying = false;
      if (!qualifying) continue;
      row.capacity_qps = p.load_qps;
      row.expected_accuracy = p.expected_accuracy;
      row.expected_violation_rate = p.expected_violation_rate;
      row.at_grid_top = &p == &t.policies.back();
    }
    rows_.push_back(row);
    curves_.push_back(std::move(curve));
  }
}

int CapacityTable::fewest_workers_for(double load_qps, bool* enough) const {
  for (const auto& r : rows_)
    if (r.capacity_qps > 0 && r.capacity_qps >= load_qps) {
      if (enough) *enough = true;
      return r.workers;
    }
  for (const auto& r : rows_) {
    if (!r.at_grid_top) continue;
    const double workers = static_cast<double>(r.workers) * load_qps / r.capacity_qps;
    for (const auto& bigger : rows_)
      if (bigger.workers >= workers) {
        if (enough) *enough = true;
        return bigger.workers;
      }
    break;
  }
  if (enough) *enough = false;
  return rows_.back().workers;
}

int CapacityTable::workers_for(double load_qps, bool* enough, int ceiling) const {
  bool ok = false;
  const int fewest = fewest_workers_for(load_qps, &ok);
  if (enough) *enough = ok;
  if (target_.objective == CapacityObjective::kFloor || !ok) return fewest;
  // Every count from `fewest` up that meets the targets at this load: its
  // capacity covers it, or (above every capacity) it qualified up to the
  // grid's top, where `fewest` already extrapolated the load per worker.
  int best = fewest;
  double best_score = -INFINITY;
  for (const auto& r : rows_) {
    if (r.workers < fewest || (ceiling > 0 && r.workers > ceiling)) continue;
    if (!(r.capacity_qps > 0 && r.capacity_qps >= load_qps) && !r.at_grid_top) continue;
    const double score = 100 * load_qps * curve_accuracy(r, load_qps) - target_.worker_price * r.workers;
    if (score > best_score) {  // strict: the fewest workers on a tie
      best_score = score;
      best = r.workers;
    }
  }
  return best;
}

int CapacityTable::envelope_workers_for(const std::vector<std::pair<double, double>>& shares, bool* enough,
                                        int ceiling) const {
  std::size_t rows = rows_.size();
  while (ceiling > 0 && rows > 1 && rows_[rows - 1].workers > ceiling) --rows;
  auto meets = [&](int i) {  // i: 1-based index into the compiled counts
    const std::vector<GridFigures>& grid = curves_[static_cast<std::size_t>(i - 1)];
    if (grid.empty()) return false;
    return meets_count_target(envelope_mixture(shares, grid, true), target_.max_violation_rate, target_.min_accuracy);
  };
  const int i = shares.empty() ? 1 : fewest_count_meeting(1, static_cast<int>(rows), meets);
  if (enough) *enough = i > 0;
  return rows_[static_cast<std::size_t>(i > 0 ? i - 1 : static_cast<int>(rows) - 1)].workers;
}

const CapacityRow* CapacityTable::row_for(int workers) const {
  const CapacityRow* row = nullptr;
  for (const auto& r : rows_)
    if (r.workers <= workers) row = &r;
  return row;
}

double CapacityTable::curve_accuracy(const CapacityRow& row, double load_qps) const {
  const std::vector<GridFigures>& c = curves_[static_cast<std::size_t>(&row - rows_.data())];
  if (c.empty()) return 0;
  if (load_qps <= c.front().load_qps) return c.front().accuracy;
  if (load_qps >= c.back().load_qps) return c.back().accuracy;
  const auto hi = static_cast<std::size_t>(
      std::upper_bound(c.begin(), c.end(), load_qps, [](double l, const GridFigures& g) { return l < g.load_qps; }) -
      c.begin());
  const std::size_t lo = hi - 1;
  const double f = (load_qps - c[lo].load_qps) / (c[hi].load_qps - c[lo].load_qps);
  return c[lo].accuracy + f * (c[hi].accuracy - c[lo].accuracy);
}

double CapacityTable::expected_accuracy(int workers, double load_qps) const {
  const CapacityRow* r = row_for(workers);
  return r ? curve_accuracy(*r, load_qps) : 0;
}

double CapacityTable::capacity_qps(int workers) const {
  const CapacityRow* r = row_for(workers);
  return r ? r->capacity_qps : 0;
}

int CapacityTable::step_below(int workers) const {
  int s = 0;
  for (const auto& r : rows_)
    if (r.workers < workers) s = r.workers;
  return s;
}

std::vector<int> CapacityTable::worker_counts() const {
  std::vector<int> out;
  for (const auto& r : rows_) out.push_back(r.workers);
  return out;
}

}  // namespace lull::manager
