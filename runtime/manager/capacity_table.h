#pragma once
// The autoscaler's answer to "how many workers for this load": for each
// worker count compiled in the policy library, the highest load up to which
// every policy of that count meets the violation target (and, if given, the
// accuracy floor) by the compiler's own expectations, which the library
// carries per policy. The planner's rule (the fewest workers meeting the
// target) read from the library in the runtime, so the manager needs no
// compiler. A policy at load L serves estimates up to L, so the capacity is
// the top of the run of qualifying loads from the bottom of the grid.
#include <string>
#include <vector>

#include "runtime/policy_table.h"

namespace lull::manager {

struct CapacityTarget {
  double max_violation_rate = 0.01;  // in (0, 1)
  double min_accuracy = 0;           // 0: no floor
};

struct CapacityRow {
  int workers = 0;
  double capacity_qps = 0;      // 0: not even its lowest load qualifies
  double expected_accuracy = 0;  // of the policy at the capacity
  double expected_violation_rate = 0;
  // Every load of its table qualifies: the capacity is at least the grid's
  // top, not known beyond it.
  bool at_grid_top = false;
};

class CapacityTable {
 public:
  // `library`: one table per worker count (any order). Throws
  // std::invalid_argument when it is empty or the target is out of range.
  CapacityTable(const std::vector<runtime::PolicyTable>& library, CapacityTarget target);

  // The fewest compiled workers whose capacity covers load_qps. Above every
  // capacity, when some count qualified up to its grid's top (its capacity
  // only a lower bound), the load per worker of the smallest such count is
  // assumed to hold for more workers: the compiled count covering
  // load * its workers / its capacity. Otherwise, or beyond the largest
  // count, the largest compiled count (*enough then false).
  int workers_for(double load_qps, bool* enough = nullptr) const;
  // The capacity of `workers` workers: that of the largest compiled count
  // not above it (the policy the runtime uses for them); 0 below the smallest.
  double capacity_qps(int workers) const;
  // The largest compiled count below `workers` (the next step down); 0 if none.
  int step_below(int workers) const;
  int max_workers() const { return rows_.back().workers; }
  std::vector<int> worker_counts() const;  // ascending
  int min_workers() const { return rows_.front().workers; }
  const std::vector<CapacityRow>& rows() const { return rows_; }  // ascending by workers
  const CapacityTarget& target() const { return target_; }

 private:
  std::vector<CapacityRow> rows_;
  CapacityTarget target_;
};

}  // namespace lull::manager
