#pragma once
// Rates that move, for `lull simulate --trace mmpp:...|sinusoid:...` and
// `lull loadgen --modulation ...` (docs/user-guide.md, "Traffic whose rate
// moves"): a rate trajectory as rate segments, the arrivals within each
// drawn by the run's --arrivals process (Poisson, gamma or batch).
//   mmpp:RATIO:STATE_S        two states, rates high:low = RATIO:1 (RATIO >= 1),
//                             exponential state times of mean STATE_S seconds,
//                             the mean rate the one given; random first state
//   sinusoid:AMPLITUDE:PERIOD_S  rate mean * (1 + AMPLITUDE sin(2 pi t / PERIOD_S + phase)),
//                             0 <= AMPLITUDE <= 1, random phase; piecewise constant
//                             over PERIOD_S / 100 (at most 1 s), each piece's mean
// The seed draws the states or the phase.
#include <cstdint>
#include <string>
#include <vector>

#include "schema/rate_file.h"

namespace lull {

struct Modulation {
  enum class Kind { kMmpp, kSinusoid } kind = Kind::kMmpp;
  double ratio = 1, state_s = 1;        // mmpp
  double amplitude = 0, period_s = 60;  // sinusoid
};

// "mmpp:RATIO:STATE_S" or "sinusoid:AMPLITUDE:PERIOD_S"; throws
// std::invalid_argument naming `flag` and the field.
Modulation parse_modulation(const std::string& text, const std::string& flag);
// True when `text` starts with a modulation's kind ("mmpp:" or "sinusoid:").
bool names_modulation(const std::string& text);

// Segments covering [0, duration_s) whose time-average rate is mean_qps in expectation.
std::vector<RateSegment> modulated_rate_segments(const Modulation& m, double mean_qps, double duration_s,
                                                 std::uint64_t seed);

}  // namespace lull
