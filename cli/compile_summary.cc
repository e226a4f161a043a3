#include "cli/compile_summary.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace lull::cli {
namespace {

std::string row(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string row(const char* format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  return std::string(line) + "\n";
}

std::string one_set(const compiler::LibrarySweep& s) {
  std::string out = row("  %9s  %13s  %14s", "load QPS", "exp. accuracy", "exp. violation");
  int beyond = 0;
  for (const auto& r : s.sweep.reports) {
    out += row("  %9g  %13.4f  %14.4f%s", r.load_qps, r.expected_accuracy, r.expected_violation_rate,
               r.beyond_capacity ? "  beyond capacity" : "");
    beyond += r.beyond_capacity ? 1 : 0;
  }
  if (beyond > 0)
    out += row("%d load(s) beyond capacity: more than %d workers serve with the fastest model", beyond, s.workers);
  return out;
}

std::string per_worker_count(const std::vector<compiler::LibrarySweep>& sweeps) {
  std::string out = row("  %7s  %5s  %-18s  %-17s  %-17s  %s", "workers", "loads", "load QPS", "exp. accuracy",
                        "exp. violation", "beyond capacity");
  for (const auto& s : sweeps) {
    const auto& rs = s.sweep.reports;
    if (rs.empty()) continue;
    auto [amin, amax] = std::minmax_element(
        rs.begin(), rs.end(), [](const auto& a, const auto& b) { return a.expected_accuracy < b.expected_accuracy; });
    auto [vmin, vmax] = std::minmax_element(rs.begin(), rs.end(), [](const auto& a, const auto& b) {
      return a.expected_violation_rate < b.expected_violation_rate;
    });
    const auto beyond = std::count_if(rs.begin(), rs.end(), [](const auto& r) { return r.beyond_capacity; });
    char loads[40], acc[40], vio[40];
    std::snprintf(loads, sizeof loads, "%g..%g", rs.front().load_qps, rs.back().load_qps);
    std::snprintf(acc, sizeof acc, "%.4f..%.4f", amin->expected_accuracy, amax->expected_accuracy);
    std::snprintf(vio, sizeof vio, "%.4f..%.4f", vmin->expected_violation_rate, vmax->expected_violation_rate);
    out +=
        row("  %7d  %5zu  %-18s  %-17s  %-17s  %ld", s.workers, rs.size(), loads, acc, vio, static_cast<long>(beyond));
  }
  return out;
}

}  // namespace

std::string compile_summary_table(const std::vector<compiler::LibrarySweep>& sweeps) {
  if (sweeps.size() == 1) return one_set(sweeps.front());
  return per_worker_count(sweeps);
}

}  // namespace lull::cli
