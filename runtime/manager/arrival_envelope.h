#pragma once
// The autoscaler's reactive safety net (as InferLine's tuner): the arrival
// rate over several windows at once (e.g. 1 s, 5 s, 30 s), each compared
// with the capacity of the workers that are up times that window's
// tolerance. A short window tolerates a larger burst (queues absorb it), a
// long one none; any window over its line trips, and the autoscaler scales
// out at once, whatever the forecast said. Arrivals are counted in fixed
// buckets, so memory is bounded by the longest window and no per-query
// timestamp is kept.
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace lull::manager {

struct EnvelopeWindow {
  std::int64_t window_us = 0;
  double tolerance = 1.0;  // trips when rate > capacity * tolerance
};

// "1:1.25,5:1.1,30:1" (WINDOW_S:TOLERANCE, comma-separated). Throws
// std::invalid_argument naming the text.
std::vector<EnvelopeWindow> parse_envelope(const std::string& text);

struct EnvelopeCheck {
  bool tripped = false;
  double rate_qps = 0;         // the tripping window's rate (else the highest rate of any window)
  std::int64_t window_us = 0;  // that window
};

class ArrivalEnvelope {
 public:
  // bucket_us: counting granularity; windows are rounded to whole buckets.
  ArrivalEnvelope(std::vector<EnvelopeWindow> windows, std::int64_t bucket_us = 100'000);
  void record_arrival(std::int64_t t_us) { record_arrivals(t_us, 1); }
  void record_arrivals(std::int64_t t_us, std::uint64_t n);
  // Arrivals per second in (now - window, now], counted by whole buckets.
  double rate_qps(std::int64_t now_us, std::int64_t window_us) const;
  // Each window against capacity_qps (of the windows over their line, the
  // highest rate is reported;
  // a window longer than the time observed so far is not checked).
  EnvelopeCheck check(std::int64_t now_us, double capacity_qps) const;
  const std::vector<EnvelopeWindow>& windows() const { return windows_; }

 private:
  std::vector<EnvelopeWindow> windows_;
  std::int64_t bucket_us_;
  std::int64_t longest_us_ = 0;
  std::int64_t first_us_ = -1;
  std::deque<std::pair<std::int64_t, std::uint64_t>> buckets_;  // (bucket index, count), ascending
};

}  // namespace lull::manager
