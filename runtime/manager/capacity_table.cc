// Capacity per compiled worker count from the library's expectations (why:
// see capacity_table.h).
#include "runtime/manager/capacity_table.h"

#include <algorithm>
#include <stdexcept>

namespace lull::manager {

CapacityTable::CapacityTable(const std::vector<runtime::PolicyTable>& library, CapacityTarget target)
    : target_(target) {
  if (library.empty()) throw std::invalid_argument("capacity table: the policy library is empty");
  if (!(target.max_violation_rate > 0 && target.max_violation_rate < 1))
    throw std::invalid_argument("capacity table: the violation target must be in (0, 1)");
  if (!(target.min_accuracy >= 0 && target.min_accuracy < 1))
    throw std::invalid_argument("capacity table: the accuracy floor must be in [0, 1)");
  for (const auto& t : library) {
    CapacityRow row;
    row.workers = t.workers;
    for (const auto& p : t.policies) {  // ascending load
      if (p.expected_violation_rate > target.max_violation_rate || p.expected_accuracy < target.min_accuracy) break;
      row.capacity_qps = p.load_qps;
      row.expected_accuracy = p.expected_accuracy;
      row.expected_violation_rate = p.expected_violation_rate;
      row.at_grid_top = &p == &t.policies.back();
    }
    rows_.push_back(row);
  }
  std::sort(rows_.begin(), rows_.end(), [](const CapacityRow& a, const CapacityRow& b) { return a.workers < b.workers; });
}

int CapacityTable::workers_for(double load_qps, bool* enough) const {
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

double CapacityTable::capacity_qps(int workers) const {
  double c = 0;
  for (const auto& r : rows_)
    if (r.workers <= workers) c = r.capacity_qps;
  return c;
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
