// libFuzzer target: the simulator's trace inputs (runtime/sim/trace_spec and
// arrivals): the --trace text, rate files (hold and reference replay) and
// arrivals files. The first byte picks what the rest is; errors must be
// std::invalid_argument (naming the file for files); a trace that reads must
// yield non-negative, non-decreasing arrival times within the documented
// trace length.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "runtime/sim/trace_spec.h"
#include "schema/input_limits.h"
#include "test/fuzz/fuzz_support.h"

namespace {

using lull::fuzz::finding;

// Draws up to 20,000 arrivals and checks their order.
void drain(lull::sim::ArrivalSource& source, double limit_s) {
  std::int64_t prev = 0, t = 0;
  for (int i = 0; i < 20000 && source.next(&t); ++i) {
    if (t < prev) finding("arrival times decrease");
    if (static_cast<double>(t) > (limit_s + 1) * 1e6) finding("arrival past the trace's documented length");
    prev = t;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace lull::sim;
  if (size == 0) return 0;
  const int mode = data[0] % 5;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const double limit_s = 2 * lull::limits::kMaxTraceSeconds;  // a rate file's last line holds for its gap
  const ArrivalProcess process = mode == 4 ? ArrivalProcess::gamma(0.5) : ArrivalProcess{};
  if (mode == 0) {  // --trace text, and --arrivals text
    try {
      TraceSpec spec = parse_trace_spec(rest);
      if (spec.kind != TraceSpec::Kind::kConstant) return 0;  // names a path: not ours to open
      auto source = make_arrival_source(spec, process, 1);
      drain(*source, spec.duration_s);
    } catch (const std::invalid_argument&) {
    }
    try {
      lull::parse_arrival_process(rest, "--arrivals");
    } catch (const std::invalid_argument&) {
    }
    return 0;
  }
  const std::string path = lull::fuzz::write_scratch("trace.txt", rest);
  TraceSpec spec;
  spec.kind = mode == 3 ? TraceSpec::Kind::kArrivals : TraceSpec::Kind::kRateFile;
  spec.path = path;
  if (mode == 2) set_replay_mode(&spec, "reference");
  try {
    auto source = make_arrival_source(spec, process, 7);
    drain(*source, limit_s);
  } catch (const std::invalid_argument& e) {
    lull::fuzz::check_error_names(e.what(), path);
  }
  return 0;
}
