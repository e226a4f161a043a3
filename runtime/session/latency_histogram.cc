#include "runtime/session/latency_histogram.h"

#include <algorithm>

namespace lull::session {

LatencyHistogram LatencyHistogram::around_slo(std::int64_t slo_us) {
  // Dense from 0.75x to 1.5x SLO where p99 lives for a loaded policy; the
  // wide ones show how far a bad period strays.
  static const double kFractions[] = {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0,
                                      1.05, 1.1, 1.25, 1.5, 2.0,  3.0, 5.0,  10.0};
  LatencyHistogram h;
  for (double f : kFractions) h.upper_bounds_s.push_back(static_cast<double>(slo_us) * f / 1e6);
  h.bucket_counts.assign(h.upper_bounds_s.size() + 1, 0);
  return h;
}

void LatencyHistogram::observe_us(std::int64_t latency_us) {
  const double s = static_cast<double>(latency_us) / 1e6;
  const auto at = std::lower_bound(upper_bounds_s.begin(), upper_bounds_s.end(), s);  // first bound >= s
  bucket_counts[static_cast<std::size_t>(at - upper_bounds_s.begin())]++;
  sum_s += s;
  count++;
}

}  // namespace lull::session
