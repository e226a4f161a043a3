#pragma once
// The autoscaling simulations' workers_over_time, as the JSON writes it:
// times strictly increasing (also once printed), and each entry's counts
// differ from the one before it (no entry repeated).
#include <vector>

#include "runtime/sim/result_json.h"
#include "runtime/sim/autoscaled_workers.h"

namespace lull::test {

inline bool one_entry_per_change(const std::vector<sim::WorkerCountSample>& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    const auto &a = v[i - 1], &b = v[i];
    if (!(a.t_s < b.t_s) || sim::json_num(a.t_s) == sim::json_num(b.t_s)) return false;
    if (a.desired == b.desired && a.starting == b.starting && a.up == b.up && a.draining == b.draining) return false;
  }
  return true;
}

}  // namespace lull::test
