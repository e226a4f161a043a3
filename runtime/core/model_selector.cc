#include "runtime/core/model_selector.h"

#include <algorithm>

namespace lull::core {

int state_index(const CompiledPolicy& policy, int queue_len, std::int64_t min_slack_us) {
  const int grid = policy.grid_size();
  if (queue_len > policy.max_queue) return policy.max_queue * grid;  // F
  // j = index of the last T_i <= slack, at least 0 (late queries map to j = 0).
  const double slack = static_cast<double>(min_slack_us);
  const double* first = policy.slack_grid_us.data();
  const int j = std::max(0, static_cast<int>(std::upper_bound(first, first + grid, slack) - first) - 1);
  return (queue_len - 1) * grid + j;
}

Selection select_action(const CompiledPolicy& policy, int queue_len, std::int64_t min_slack_us) {
  if (queue_len > policy.max_queue) return Selection{0, queue_len, true};
  const Action a = policy.actions[static_cast<std::size_t>(state_index(policy, queue_len, min_slack_us))];
  if (a.batch == 0) return Selection{0, queue_len, true};
  return Selection{a.model, std::min<int>(a.batch, queue_len), false};
}

}  // namespace lull::core
