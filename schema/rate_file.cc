#include "schema/rate_file.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "schema/bounded_file.h"
#include "schema/input_limits.h"
#include "schema/number_text.h"

namespace lull {

double parse_trace_number(const std::string& s, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v))
    throw std::invalid_argument(what + ": '" + s + "' is not a number");
  return v;
}

void for_each_trace_line(const std::string& path, const std::function<void(int, const std::vector<std::string>&)>& f) {
  std::istringstream in;
  try {
    in.str(read_bounded_file(path, FileKind::kTrace));
  } catch (const FileReadError& e) {
    throw std::invalid_argument(e.what());
  }
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ss(line);
    std::vector<std::string> fields;
    for (std::string w; ss >> w;) fields.push_back(w);
    if (fields.empty() || fields[0][0] == '#') continue;
    f(line_no, fields);
  }
}

std::vector<RateSegment> read_rate_file(const std::string& path) {
  std::vector<RateSegment> segs;
  for_each_trace_line(path, [&](int n, const std::vector<std::string>& f) {
    const std::string at = path + ":" + std::to_string(n);
    if (f.size() != 2)
      throw std::invalid_argument(at + ": expected '<second> <QPS>', got " + std::to_string(f.size()) + " fields");
    const double t = parse_trace_number(f[0], at + ": second");
    const double qps = parse_trace_number(f[1], at + ": QPS");
    if (t < 0) throw std::invalid_argument(at + ": second must not be negative");
    if (qps < 0) throw std::invalid_argument(at + ": QPS must not be negative");
    if (t > limits::kMaxTraceSeconds)
      throw std::invalid_argument(at + ": second must be at most " + number_text(limits::kMaxTraceSeconds));
    if (qps > limits::kMaxLoadQps)
      throw std::invalid_argument(at + ": QPS must be at most " + number_text(limits::kMaxLoadQps));
    if (!segs.empty() && !(t > segs.back().start_s)) throw std::invalid_argument(at + ": seconds must increase");
    if (!segs.empty()) segs.back().end_s = t;
    segs.push_back(RateSegment{t, t, qps});
  });
  if (segs.empty()) throw std::invalid_argument(path + ": no '<second> <QPS>' lines");
  const double hold_s = segs.size() >= 2 ? segs[segs.size() - 1].start_s - segs[segs.size() - 2].start_s : 10.0;
  segs.back().end_s = segs.back().start_s + hold_s;
  double queries = 0;
  for (const auto& seg : segs) queries += seg.qps * (seg.end_s - seg.start_s);
  if (queries > limits::kMaxTraceQueries)
    throw std::invalid_argument(path + ": the trace holds " + number_text(queries) + " queries, more than " +
                                number_text(limits::kMaxTraceQueries));
  return segs;
}

}  // namespace lull

namespace lull {

std::vector<std::int64_t> read_arrivals_file(const std::string& path) {
  std::vector<std::int64_t> times;
  for_each_trace_line(path, [&](int n, const std::vector<std::string>& f) {
    const std::string at = path + ":" + std::to_string(n);
    if (f.size() != 1) throw std::invalid_argument(at + ": expected one arrival time in seconds");
    const double t = parse_trace_number(f[0], at + ": arrival time");
    if (t < 0) throw std::invalid_argument(at + ": arrival time must not be negative");
    if (t > limits::kMaxTraceSeconds)
      throw std::invalid_argument(at + ": arrival time must be at most " + number_text(limits::kMaxTraceSeconds) +
                                  " s");
    const auto t_us = static_cast<std::int64_t>(std::llround(t * 1e6));
    if (!times.empty() && t_us < times.back()) throw std::invalid_argument(at + ": arrival times must not decrease");
    times.push_back(t_us);
  });
  if (times.empty()) throw std::invalid_argument(path + ": no arrival times");
  return times;
}

}  // namespace lull
