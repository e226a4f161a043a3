#pragma once
// Cuts a rate trace into planning windows. Workers change only at window
// boundaries, and a count chosen for a window must still hold `lead_s` after
// it ends (the time a worker added for the next window needs to start), so a
// window's load is the highest rate from its start to lead_s past its end.
#include <vector>

#include "schema/rate_file.h"

namespace lull::compiler {

struct TraceWindow {
  double start_s = 0;
  double end_s = 0;
  double load_qps = 0;  // the highest rate in [start_s, end_s + lead_s), within the trace
};

// Windows of `window_s` from the trace's first second to its end (the last
// one may be shorter). Throws std::invalid_argument naming the flag for
// window_s <= 0 or lead_s < 0.
std::vector<TraceWindow> trace_windows(const std::vector<RateSegment>& trace, double window_s, double lead_s);

}  // namespace lull::compiler
