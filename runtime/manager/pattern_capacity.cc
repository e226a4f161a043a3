// The capacity table for the library in use and the pattern served (why:
// see pattern_capacity.h).
#include "runtime/manager/pattern_capacity.h"

#include <stdexcept>
#include <utility>

namespace lull::manager {

PatternCapacity::PatternCapacity(std::vector<core::PolicyTable> library, CapacityTarget target)
    : library_(std::move(library)), target_(target), worker_counts_(table().worker_counts()) {}

CapacityTable PatternCapacity::use_library(const std::vector<core::PolicyTable>& library) {
  CapacityTable t(library, target_, pattern_);
  if (t.worker_counts() != worker_counts_)
    throw std::invalid_argument("autoscale: a variant's library covers other worker counts than --policies'");
  library_ = library;
  return t;
}

std::optional<CapacityTable> PatternCapacity::follow(const ArrivalProcess& served) {
  if (served == pattern_) return std::nullopt;
  CapacityTable t(library_, target_, served);
  pattern_ = served;
  return t;
}

}  // namespace lull::manager
