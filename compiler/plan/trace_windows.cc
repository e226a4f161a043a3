#include "compiler/plan/trace_windows.h"

#include <algorithm>
#include <stdexcept>

#include "schema/number_text.h"

namespace lull::compiler {

std::vector<TraceWindow> trace_windows(const std::vector<RateSegment>& trace, double window_s, double lead_s) {
  if (!(window_s > 0)) throw std::invalid_argument("--window-s must be positive (got " + number_text(window_s) + ")");
  if (!(lead_s >= 0)) throw std::invalid_argument("--lead-s must be >= 0 (got " + number_text(lead_s) + ")");
  std::vector<TraceWindow> out;
  if (trace.empty()) return out;
  const double begin = trace.front().start_s, end = trace.back().end_s;
  for (double t = begin; t < end; t += window_s) {
    TraceWindow w{t, std::min(end, t + window_s), 0};
    const double until = w.end_s + lead_s;
    for (const auto& seg : trace)
      if (seg.start_s < until && seg.end_s > w.start_s) w.load_qps = std::max(w.load_qps, seg.qps);
    out.push_back(w);
  }
  return out;
}

}  // namespace lull::compiler
