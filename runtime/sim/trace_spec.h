#pragma once
// The --trace argument and the trace files it names:
//   constant:QPS:SECONDS   one rate for a duration
//   rate-file:PATH         lines "<second> <QPS>" (the Twitter trace format);
//                          each rate holds from its second until the next line,
//                          the last one for the gap before it (10 s in the trace)
//   arrivals:PATH          one arrival time in seconds per line, non-decreasing
// Blank lines and lines starting with '#' are ignored. Errors throw
// std::invalid_argument naming the file, line and field.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/sim/arrivals.h"

namespace lull::sim {

struct TraceSpec {
  enum class Kind { kConstant, kRateFile, kArrivals } kind = Kind::kConstant;
  double qps = 0;        // constant
  double duration_s = 0; // constant
  std::string path;      // rate-file, arrivals
};

TraceSpec parse_trace_spec(const std::string& text);
std::vector<RateSegment> read_rate_file(const std::string& path);
std::vector<std::int64_t> read_arrivals_file(const std::string& path);

// Builds the source; `process` and `seed` are ignored for replayed arrivals.
std::unique_ptr<ArrivalSource> make_arrival_source(const TraceSpec& spec, ArrivalProcess process, std::uint64_t seed);

// "poisson" or "gamma:CV2".
ArrivalProcess parse_arrival_process(const std::string& text);

}  // namespace lull::sim
