#include "runtime/sim/trace_spec.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runtime/sim/number_field.h"
#include "schema/input_limits.h"
#include "schema/number_text.h"
#include "schema/rate_file.h"

namespace lull::sim {
namespace {

double parse_number(const std::string& s, const std::string& what) { return parse_number_field(s, what); }

std::string str(double v) { return number_text(v); }

}  // namespace

TraceSpec parse_trace_spec(const std::string& text) {
  TraceSpec spec;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "constant") {
    const auto c2 = rest.find(':');
    if (c2 == std::string::npos)
      throw std::invalid_argument("--trace constant:QPS:SECONDS expected, got '" + text + "'");
    spec.kind = TraceSpec::Kind::kConstant;
    spec.qps = parse_number(rest.substr(0, c2), "--trace constant QPS");
    spec.duration_s = parse_number(rest.substr(c2 + 1), "--trace constant SECONDS");
    if (!(spec.qps > 0))
      throw std::invalid_argument("--trace constant: QPS must be positive, got " + rest.substr(0, c2));
    if (spec.qps > limits::kMaxLoadQps)
      throw std::invalid_argument("--trace constant: QPS must be at most " + str(limits::kMaxLoadQps) + ", got " +
                                  rest.substr(0, c2));
    if (!(spec.duration_s > 0))
      throw std::invalid_argument("--trace constant: duration must be positive, got " + rest.substr(c2 + 1) + " s");
    if (spec.duration_s > limits::kMaxTraceSeconds)
      throw std::invalid_argument("--trace constant: duration must be at most " + str(limits::kMaxTraceSeconds) +
                                  " s, got " + rest.substr(c2 + 1) + " s");
    if (spec.qps * spec.duration_s > limits::kMaxTraceQueries)
      throw std::invalid_argument("--trace constant: QPS x SECONDS must be <= " + str(limits::kMaxTraceQueries) +
                                  " queries, got " + str(spec.qps * spec.duration_s));
  } else if (names_modulation(text)) {
    // KIND:QPS:A:B:SECONDS: the modulation is KIND:A:B.
    std::vector<std::size_t> at;
    for (std::size_t i = text.find(':'); i != std::string::npos; i = text.find(':', i + 1)) at.push_back(i);
    const std::string usage =
        kind == "mmpp" ? "mmpp:QPS:RATIO:STATE_S:SECONDS" : "sinusoid:QPS:AMPLITUDE:PERIOD_S:SECONDS";
    if (at.size() != 4) throw std::invalid_argument("--trace " + usage + " expected, got '" + text + "'");
    spec.kind = TraceSpec::Kind::kModulated;
    spec.qps = parse_number(text.substr(at[0] + 1, at[1] - at[0] - 1), "--trace " + kind + " QPS");
    spec.duration_s = parse_number(text.substr(at[3] + 1), "--trace " + kind + " SECONDS");
    spec.modulation = parse_modulation(kind + ":" + text.substr(at[1] + 1, at[3] - at[1] - 1), "--trace");
    if (!(spec.qps > 0) || spec.qps > limits::kMaxLoadQps)
      throw std::invalid_argument("--trace " + kind + ": QPS must be positive and at most " + str(limits::kMaxLoadQps));
    if (!(spec.duration_s > 0) || spec.duration_s > limits::kMaxTraceSeconds)
      throw std::invalid_argument("--trace " + kind + ": SECONDS must be positive and at most " +
                                  str(limits::kMaxTraceSeconds));
    const double peak = kind == "mmpp" ? 2 * spec.qps * spec.modulation.ratio / (spec.modulation.ratio + 1)
                                       : spec.qps * (1 + spec.modulation.amplitude);
    if (peak * spec.duration_s > limits::kMaxTraceQueries)
      throw std::invalid_argument("--trace " + kind + ": the peak rate x SECONDS must be <= " +
                                  str(limits::kMaxTraceQueries) + " queries, got " + str(peak * spec.duration_s));
  } else if (kind == "rate-file" || kind == "arrivals") {
    if (rest.empty()) throw std::invalid_argument("--trace " + kind + ":PATH needs a path");
    spec.kind = kind == "rate-file" ? TraceSpec::Kind::kRateFile : TraceSpec::Kind::kArrivals;
    spec.path = rest;
  } else {
    throw std::invalid_argument("--trace '" + text +
                                "': expected constant:QPS:SECONDS, rate-file:PATH, arrivals:PATH, "
                                "mmpp:QPS:RATIO:STATE_S:SECONDS or sinusoid:QPS:AMPLITUDE:PERIOD_S:SECONDS");
  }
  return spec;
}

std::vector<RateSegment> reference_replay_segments(const std::vector<RateSegment>& lines, double duration_s) {
  if (lines.empty()) throw std::invalid_argument("reference replay needs at least one rate line");
  const auto last = static_cast<std::int64_t>(std::floor(lines.back().start_s));
  std::vector<double> per_second(static_cast<std::size_t>(last + 1), 0.0);
  std::size_t line = 0;
  for (std::int64_t sec = 0; sec <= last; ++sec) {
    while (line + 1 < lines.size() && lines[line + 1].start_s <= static_cast<double>(sec)) ++line;
    per_second[static_cast<std::size_t>(sec)] = lines[line].start_s <= static_cast<double>(sec) ? lines[line].qps : 0.0;
  }
  std::vector<RateSegment> segs;
  for (std::int64_t t = 0; static_cast<double>(t) < duration_s; ++t) {
    const double qps = per_second[static_cast<std::size_t>(t % (last + 1))];
    const double end = std::min(duration_s, static_cast<double>(t + 1));
    if (!segs.empty() && segs.back().qps == qps)
      segs.back().end_s = end;
    else
      segs.push_back(RateSegment{static_cast<double>(t), end, qps});
  }
  return segs;
}

void set_replay_mode(TraceSpec* spec, const std::string& text) {
  if (text == "hold") {
    spec->replay = ReplayMode::kHold;
  } else if (text == "reference") {
    if (spec->kind == TraceSpec::Kind::kArrivals || spec->kind == TraceSpec::Kind::kModulated)
      throw std::invalid_argument(
          "--replay reference applies to constant: and rate-file: traces, not arrivals:, "
          "mmpp: or sinusoid:");
    spec->replay = ReplayMode::kReference;
  } else {
    throw std::invalid_argument("--replay '" + text + "': expected hold or reference");
  }
}

void set_trace_scale(TraceSpec* spec, double scale) {
  if (!(scale > 0 && scale <= 1000))
    throw std::invalid_argument("--trace-scale must be in (0, 1000], got " + str(scale));
  if (scale != 1 && spec->kind == TraceSpec::Kind::kArrivals)
    throw std::invalid_argument("--trace-scale applies to constant: and rate-file: traces, not arrivals:");
  spec->scale = scale;
}

double trace_dispatch_end_s(const TraceSpec& spec) {
  if (spec.replay != ReplayMode::kReference) return 0;
  return spec.kind == TraceSpec::Kind::kConstant ? spec.duration_s : kReferenceReplaySeconds;
}

std::unique_ptr<ArrivalSource> make_arrival_source(const TraceSpec& spec, ArrivalProcess process, std::uint64_t seed) {
  return make_arrival_source(spec, std::vector<ArrivalStep>{ArrivalStep{0, process}}, seed);
}

std::vector<RateSegment> trace_rate_segments(const TraceSpec& spec) {
  std::vector<RateSegment> segs;
  switch (spec.kind) {
    case TraceSpec::Kind::kConstant:
      segs = {{0, spec.duration_s, spec.qps}};
      break;
    case TraceSpec::Kind::kRateFile:
      segs = spec.replay == ReplayMode::kReference
                 ? reference_replay_segments(read_rate_file(spec.path), kReferenceReplaySeconds)
                 : read_rate_file(spec.path);
      break;
    case TraceSpec::Kind::kModulated:
      segs = modulated_rate_segments(spec.modulation, spec.qps, spec.duration_s, spec.seed);
      break;
    case TraceSpec::Kind::kArrivals:
      throw std::invalid_argument("--trace arrivals:" + spec.path + ": recorded arrivals have no rates");
  }
  for (auto& s : segs) s.qps *= spec.scale;
  return segs;
}

std::unique_ptr<ArrivalSource> make_arrival_source(const TraceSpec& spec, const std::vector<ArrivalStep>& process,
                                                   std::uint64_t seed) {
  if (spec.kind == TraceSpec::Kind::kArrivals) return std::make_unique<ReplayArrivals>(read_arrivals_file(spec.path));
  return std::make_unique<RateArrivals>(trace_rate_segments(spec), process, seed);
}

}  // namespace lull::sim
