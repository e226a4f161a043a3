// Pending drains of the serving layer (why: see drain_tracker.h).
#include "runtime/core/drain_tracker.h"

#include <utility>

namespace lull::core {

void DrainTracker::begin(int worker, bool busy, std::function<void()> drained) {
  if (!busy) {
    pending_.erase(worker);
    drained();
    return;
  }
  pending_[worker] = std::move(drained);
}

void DrainTracker::on_idle(int worker) {
  auto it = pending_.find(worker);
  if (it == pending_.end()) return;
  auto drained = std::move(it->second);
  pending_.erase(it);
  drained();
}

}  // namespace lull::core
