#pragma once
// The --trace argument and the trace files it names:
//   constant:QPS:SECONDS   one rate for a duration
//   rate-file:PATH         lines "<second> <QPS>" (the Twitter trace format);
//                          each rate holds from its second until the next line,
//                          the last one for the gap before it (10 s in the trace)
//   arrivals:PATH          one arrival time in seconds per line, non-decreasing
//   mmpp:QPS:RATIO:STATE_S:SECONDS, sinusoid:QPS:AMPLITUDE:PERIOD_S:SECONDS
//                          a rate that moves around a mean of QPS
//                          (schema/modulated_rates.h), drawn with the run's seed
// Blank lines and lines starting with '#' are ignored. Errors throw
// std::invalid_argument naming the file, line and field.
// The --replay mode says how constant and rate-file traces run:
//   hold       (default) as above; the run serves every query that arrived
//   reference  the reference simulator's replay (mdp-spec 8): a rate file
//              becomes one rate per second for seconds 0..last (each second
//              takes the line it falls in, so the last line lasts 1 s), the
//              run lasts 300 s and wraps around (second t mod (last+1));
//              for both kinds, queries still queued at the run's end are not
//              dispatched and not counted as served.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/sim/arrivals.h"
#include "schema/modulated_rates.h"

namespace lull::sim {

// Length of a reference replay of a rate file.
inline constexpr double kReferenceReplaySeconds = 300;

enum class ReplayMode { kHold, kReference };

struct TraceSpec {
  enum class Kind { kConstant, kRateFile, kArrivals, kModulated } kind = Kind::kConstant;
  double qps = 0;          // constant; modulated: the mean
  double duration_s = 0;   // constant, modulated
  Modulation modulation;   // modulated
  std::uint64_t seed = 1;  // modulated: draws the trajectory (the run's --seed)
  std::string path;        // rate-file, arrivals
  ReplayMode replay = ReplayMode::kHold;
  double scale = 1;  // --trace-scale: every rate multiplied (constant, rate-file)
};

TraceSpec parse_trace_spec(const std::string& text);
// "hold" or "reference"; reference on an arrivals: trace is refused.
void set_replay_mode(TraceSpec* spec, const std::string& text);
// The time at which the run stops dispatching (SimOptions::dispatch_end_s):
// the run's length under reference replay, 0 (serve everything) otherwise.
double trace_dispatch_end_s(const TraceSpec& spec);
// --trace-scale F: every rate times F (> 0); refused for arrivals: traces.
void set_trace_scale(TraceSpec* spec, double scale);

// Hold mode: segment i runs from line i's second to line i+1's; the last for
// the gap before it (the parser is schema/rate_file.h's, shared with the planner).
using lull::read_rate_file;
// Reference mode: per-second rates from the lines' (second, QPS) (only
// start_s and qps are read), repeated over `duration_s` seconds. Seconds
// before the first line have rate 0. Equal neighbouring seconds are merged.
std::vector<RateSegment> reference_replay_segments(const std::vector<RateSegment>& lines, double duration_s);
using lull::read_arrivals_file;  // schema/rate_file.h, shared with the compiler's fit

// The rates of a constant or rate-file trace as the run replays them (scale
// applied); throws std::invalid_argument for an arrivals: trace.
std::vector<RateSegment> trace_rate_segments(const TraceSpec& spec);

// Builds the source; `process` and `seed` are ignored for replayed arrivals.
std::unique_ptr<ArrivalSource> make_arrival_source(const TraceSpec& spec, ArrivalProcess process, std::uint64_t seed);
// The same with a process that changes over time (--arrivals with steps).
std::unique_ptr<ArrivalSource> make_arrival_source(const TraceSpec& spec, const std::vector<ArrivalStep>& steps,
                                                   std::uint64_t seed);

}  // namespace lull::sim
