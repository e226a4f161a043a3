#include "cli/open_loop.h"

#include <algorithm>
#include <random>

#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "runtime/sim/arrivals.h"
#include "schema/input_limits.h"

namespace lull::cli {

double parse_duration_s(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "ms" ? 1e-3 : unit == "m" ? 60 : -1;
  if (used == 0 || scale < 0 || !(v > 0)) throw UsageError(flag + " '" + text + "': expected e.g. 30s, 500ms, 2m");
  check_positive_range(flag + " (s)", v * scale, limits::kMaxTraceSeconds);
  return v * scale;
}

std::vector<double> arrival_schedule(double rate, double duration_s, const ArrivalProcess& process,
                                     std::uint64_t seed) {
  return arrival_schedule({RateSegment{0, duration_s, rate}}, process, seed);
}

std::vector<double> arrival_schedule(const std::vector<RateSegment>& segments, const ArrivalProcess& process,
                                     std::uint64_t seed) {
  std::vector<double> at_s;
  sim::RateArrivals source(segments, process, seed);  // the simulator's sampler
  for (std::int64_t t_us = 0; source.next(&t_us);) at_s.push_back(static_cast<double>(t_us) / 1e6);
  return at_s;
}

double percentile_ms(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least p% of the samples at or below it.
  const double rank = p / 100.0 * static_cast<double>(v.size());
  size_t i = rank <= 1 ? 0 : static_cast<size_t>(rank + 0.999999) - 1;
  i = std::min(v.size() - 1, i);
  return static_cast<double>(v[i]) / 1000.0;
}

}  // namespace lull::cli
