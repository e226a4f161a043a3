#pragma once
// The fastest model's throughput on `workers` workers: the most queries per
// second any batch up to `max_batch` gives (batch / its latency). A load
// above it is beyond capacity for the compiler's sweep, the planner and the
// runtime's split search alike.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace lull {

// latency_us[b - 1]: the fastest model's latency at batch b, in microseconds.
inline double fastest_model_capacity_qps(const std::vector<double>& latency_us, int max_batch, int workers) {
  double best = 0;
  for (int b = 1; b <= max_batch && b <= static_cast<int>(latency_us.size()); ++b)
    best = std::max(best, b / latency_us[static_cast<std::size_t>(b - 1)]);
  return best * 1e6 * workers;
}

}  // namespace lull
