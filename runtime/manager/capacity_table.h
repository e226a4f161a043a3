#pragma once
// The autoscaler's answer to "how many workers for this load": for each
// worker count compiled in the policy library, the highest load up to which
// every policy of that count meets the violation target (and, if given, the
// accuracy floor) by the compiler's own expectations, which the library
// carries per policy. The planner's rule (the fewest workers meeting the
// target) read from the library in the runtime, so the manager needs no
// compiler. A policy at load L serves estimates up to L, so the capacity is
// the top of the run of qualifying loads from the bottom of the grid.
// The price objective (--autoscale-objective price) chooses, among the counts
// meeting the targets, the one that maximizes the accuracy of the load's
// queries minus a price per worker: it spends workers where they buy the
// most accuracy, instead of holding accuracy level across loads as the
// fewest-workers rule does (docs/operators-guide.md, "The price rule").
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/policy_table.h"
#include "schema/count_rule.h"
#include "schema/arrival_process.h"

namespace lull::manager {

enum class CapacityObjective {
  kFloor,  // the fewest workers meeting the targets (the planner's rule)
  kPrice,  // among those meeting them, the most accuracy net of the workers' price
};

struct CapacityTarget {
  double max_violation_rate = 0.01;  // in (0, 1)
  double min_accuracy = 0;           // 0: no floor
  CapacityObjective objective = CapacityObjective::kFloor;
  // kPrice: accuracy points (a query at accuracy 0.78 earns 78) per
  // worker-second. At load L, workers K score 100 * L * acc(K, L) - price * K.
  double worker_price = 0;
};

struct CapacityRow {
  int workers = 0;
  double capacity_qps = 0;       // 0: not even its lowest load qualifies
  double expected_accuracy = 0;  // of the policy at the capacity
  double expected_violation_rate = 0;
  // Every load of its table qualifies: the capacity is at least the grid's
  // top, not known beyond it.
  bool at_grid_top = false;
};

class CapacityTable {
 public:
  // `library`: one table per worker count and arrival pattern (any order).
  // Each count reads the table compiled for the least bursty pattern at or
  // above `pattern` (its family or Poisson first), else its most bursty one:
  // the runtime passes the pattern it estimates (docs/solver.md). Throws
  // std::invalid_argument when the library is empty or the target is out of
  // range.
  CapacityTable(const std::vector<core::PolicyTable>& library, CapacityTarget target,
                const ArrivalProcess& pattern = ArrivalProcess::poisson());

  // kFloor: fewest_workers_for(load_qps). kPrice: among the compiled counts
  // from that one up whose capacity covers load_qps (above every capacity,
  // those qualifying up to the grid's top), the one maximizing
  // 100 * load * expected_accuracy(K, load) - worker_price * K, the fewest on
  // a tie; that is never fewer workers than kFloor, and a higher price never
  // more. With *enough false, the kFloor answer. `ceiling` > 0 (the
  // autoscaler's --max-workers): kPrice searches only the counts up to it, so
  // the answer is the best score within it, not the best over all counts
  // clamped afterwards (which can score worse: the score need not be concave
  // in the workers). kFloor ignores it (its answer clamps to the same).
  int workers_for(double load_qps, bool* enough = nullptr, int ceiling = 0) const;
  // The fewest compiled workers whose capacity covers load_qps. Above every
  // capacity, when some count qualified up to its grid's top (its capacity
  // only a lower bound), the load per worker of the smallest such count is
  // assumed to hold for more workers: the compiled count covering
  // load * its workers / its capacity. Otherwise, or beyond the largest
  // count, the largest compiled count (*enough then false).
  int fewest_workers_for(double load_qps, bool* enough = nullptr) const;
  // The shared rule (schema/count_rule.h, the planner's for tracked traffic):
  // the fewest compiled count whose policies' mixture over `shares` (load
  // estimate, share of arrivals) meets the target; an estimate above a
  // count's top compiled load counts as violated. Searched by the same
  // fewest_count_meeting over the compiled counts, up to `ceiling` (> 0).
  // None meeting: the largest count searched, *enough false.
  int envelope_workers_for(const std::vector<std::pair<double, double>>& shares, bool* enough = nullptr,
                           int ceiling = 0) const;
  // The expected accuracy of `workers`' policies (the largest compiled count
  // not above it) at load_qps: linear between compiled loads, the end value
  // beyond them; 0 below the smallest count.
  double expected_accuracy(int workers, double load_qps) const;
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
  const ArrivalProcess& pattern() const { return pattern_; }

 private:
  const CapacityRow* row_for(int workers) const;  // the largest compiled count <= workers
  double curve_accuracy(const CapacityRow& row, double load_qps) const;

  std::vector<CapacityRow> rows_;
  // Per row (same order): its policies' compiled figures, ascending by load,
  // for expected_accuracy() and the envelope rule.
  std::vector<std::vector<GridFigures>> curves_;
  CapacityTarget target_;
  ArrivalProcess pattern_;
};

// The index in `sets` (one worker count's tables) of the table for
// `pattern`, by CapacityTable's rule. Requires !sets.empty().
std::size_t table_for_pattern(const std::vector<const core::PolicyTable*>& sets, const ArrivalProcess& pattern);

}  // namespace lull::manager
