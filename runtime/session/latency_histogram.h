#pragma once
// The latency histogram behind lull_request_duration_seconds. Its buckets are
// fractions and multiples of the SLO, dense around it, so that
// histogram_quantile() resolves p99 near the SLO and the bucket le=SLO counts
// exactly the answers that met it (a violation is latency > SLO).
#include <cstdint>
#include <vector>

namespace lull::session {

struct LatencyHistogram {
  std::vector<double> upper_bounds_s;        // ascending, without +Inf
  std::vector<std::uint64_t> bucket_counts;  // per bound, not cumulative; last entry is +Inf
  double sum_s = 0;
  std::uint64_t count = 0;

  // Buckets at SLO x {0.05 .. 10}; the SLO itself is one bound.
  static LatencyHistogram around_slo(std::int64_t slo_us);
  void observe_us(std::int64_t latency_us);
};

}  // namespace lull::session
