#include "runtime/core/policy_switcher.h"

#include <algorithm>
#include <stdexcept>

namespace lull::core {

PolicySwitcher::PolicySwitcher(std::vector<double> grid_loads_qps) : loads_(std::move(grid_loads_qps)) {
  if (loads_.empty()) throw std::invalid_argument("policy switcher needs at least one compiled load");
  if (!std::is_sorted(loads_.begin(), loads_.end())) throw std::invalid_argument("compiled loads must be ascending");
}

int PolicySwitcher::update(double estimated_qps, std::int64_t now_us, bool* changed) {
  const auto it = std::lower_bound(loads_.begin(), loads_.end(), estimated_qps);
  const bool above = it == loads_.end();
  const int next = above ? static_cast<int>(loads_.size()) - 1 : static_cast<int>(it - loads_.begin());
  if (above && !above_grid_) {
    ++events_;
    if (on_event_) on_event_(NewPolicyNeeded{now_us, estimated_qps, loads_.back()});
  }
  above_grid_ = above;
  if (changed) *changed = next != current_;
  current_ = next;
  return current_;
}

}  // namespace lull::core
