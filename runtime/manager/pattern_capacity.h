#pragma once
// Which capacity table the autoscaler reads: that of the policy library in
// use (a model variant switch changes it) for the arrival pattern being
// served (the pattern switcher's choice, read before each decision). One rule for `lull serve --autoscale`
// (ServingAutoscaler) and `lull simulate --autoscale` (AutoscaledWorkers): a table is built only when the library or
// the pattern changes, and a new library keeps the pattern (a switch does not fall back to Poisson, which would rebuild
// the served pattern's table at the next decision for nothing).
#include <optional>
#include <vector>

#include "runtime/manager/capacity_table.h"
#include "runtime/core/policy_table.h"
#include "schema/arrival_process.h"

namespace lull::manager {

class PatternCapacity {
 public:
  // Capacity read for Poisson until follow() says otherwise. Throws
  // std::invalid_argument as CapacityTable does.
  PatternCapacity(std::vector<core::PolicyTable> library, CapacityTarget target);

  // The table of the library in use for the pattern capacity is read for.
  CapacityTable table() const { return CapacityTable(library_, target_, pattern_); }
  // A variant switch: `library` is in use from now on, read for the same
  // pattern; returns its table. Throws std::invalid_argument (nothing
  // changed) when it covers other worker counts.
  CapacityTable use_library(const std::vector<core::PolicyTable>& library);
  // The pattern being served: when capacity is read for another one, it is
  // read for `served` from now on and its table returned; otherwise none
  // (nothing built).
  std::optional<CapacityTable> follow(const ArrivalProcess& served);

  const ArrivalProcess& pattern() const { return pattern_; }
  const std::vector<int>& worker_counts() const { return worker_counts_; }

 private:
  std::vector<core::PolicyTable> library_;
  CapacityTarget target_;
  ArrivalProcess pattern_ = ArrivalProcess::poisson();
  std::vector<int> worker_counts_;
};

}  // namespace lull::manager
