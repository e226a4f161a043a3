#pragma once
// The rate-file format (lines "<second> <QPS>", the Twitter trace's) and the
// line reader that trace files share. It lives in schema/ because both the
// simulator (runtime/sim/trace_spec) and the planner (compiler/plan) read rate
// files, and neither may include the other's headers: one parser, one set of
// errors (file:line: field: why, std::invalid_argument).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lull {

// Rate `qps` from start_s until end_s.
struct RateSegment {
  double start_s = 0;
  double end_s = 0;
  double qps = 0;
};

// Segment i runs from line i's second to line i+1's; the last one for the gap
// before it (10 s when the file has one line). Blank lines and lines starting
// with '#' are ignored.
std::vector<RateSegment> read_rate_file(const std::string& path);

// Calls f(line_number, fields) for each non-blank, non-comment line of a
// trace file; throws naming the file when it cannot be opened.
void for_each_trace_line(const std::string& path, const std::function<void(int, const std::vector<std::string>&)>& f);

// One arrival time in seconds per line, non-decreasing, rounded to whole
// microseconds (the simulator's replay and `lull compile --arrivals fit:FILE`).
std::vector<std::int64_t> read_arrivals_file(const std::string& path);

// A whole, finite number; `what` names the file:line and field in the error.
double parse_trace_number(const std::string& text, const std::string& what);

}  // namespace lull
