#pragma once
// The range of one profiled latency (a sample or a latency_s), for every
// reader that takes latencies from a file: positive, finite, and at most
// limits::kMaxLatencySloMultiple x the SLO. Without an SLO (profiles import,
// interpolate) the bound is that multiple of the largest SLO lull accepts. A
// latency past it sizes the solver's tables (and the simulator's events) by
// millions of arrivals: it is a unit mistake, never a measurement.
#include <cmath>
#include <string>

#include "schema/input_limits.h"
#include "schema/number_text.h"

namespace lull {

// The largest latency in seconds accepted under an SLO of `slo_ms` (0: none known).
inline double max_latency_s(double slo_ms) {
  return limits::kMaxLatencySloMultiple * (slo_ms > 0 ? slo_ms : limits::kMaxSloMs) / 1000;
}

// Why `seconds` is out of range, or "" when it is in range.
inline std::string latency_problem(double seconds, double slo_ms) {
  if (!(std::isfinite(seconds) && seconds > 0))
    return "latency must be positive and finite (got " + number_text(seconds) + ")";
  if (seconds > max_latency_s(slo_ms))
    return "latency must be at most " + number_text(limits::kMaxLatencySloMultiple) + " x the " +
           (slo_ms > 0 ? "SLO of " + number_text(slo_ms) + " ms" : "largest SLO") + " = " +
           number_text(max_latency_s(slo_ms)) + " s (got " + number_text(seconds) + " s)";
  return "";
}

}  // namespace lull
