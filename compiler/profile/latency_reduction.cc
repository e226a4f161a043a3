#include "compiler/profile/latency_reduction.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lull::compiler {

double percentile_linear(std::vector<double> samples, double pct) {
  std::sort(samples.begin(), samples.end());
  const double h = (static_cast<double>(samples.size()) - 1.0) * pct / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= samples.size()) return samples.back();
  return samples[lo] + (h - static_cast<double>(lo)) * (samples[lo + 1] - samples[lo]);
}

OlsLine fit_ols(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) { mx += x[i]; my += y[i]; }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  if (sxx == 0) throw std::invalid_argument("least-squares fit needs two distinct batch sizes");
  OlsLine line;
  line.slope = sxy / sxx;
  line.intercept = my - line.slope * mx;
  return line;
}

std::vector<double> complete_latency_table_us(const std::map<int, double>& measured_s, int max_queue,
                                              int profiled_batches) {
  const int bp = std::max(profiled_batches, measured_s.rbegin()->first);
  std::vector<double> table_s(static_cast<std::size_t>(bp) + 1, 0.0);  // index = batch
  bool any_missing = false;
  for (int b = 1; b <= bp; ++b) any_missing |= !measured_s.count(b);
  OlsLine first;
  if (any_missing) {
    std::vector<double> xs, ys;
    for (const auto& [b, v] : measured_s) { xs.push_back(b); ys.push_back(v); }
    first = fit_ols(xs, ys);
  }
  for (int b = 1; b <= bp; ++b) {
    const auto it = measured_s.find(b);
    table_s[b] = it != measured_s.end() ? it->second : first.at(b);
  }
  // Non-decreasing in batch size: a larger batch never finishes sooner.
  for (int b = bp - 1; b >= 1; --b)
    if (table_s[b + 1] < table_s[b]) table_s[b] = table_s[b + 1];

  std::vector<double> xs, ys;
  for (int b = 1; b <= bp; ++b) { xs.push_back(b); ys.push_back(table_s[b]); }
  const OlsLine second = fit_ols(xs, ys);

  std::vector<double> out_us(static_cast<std::size_t>(max_queue) + 1);
  for (int b = 1; b <= max_queue + 1; ++b) {
    const double s = (b <= bp && b <= max_queue) ? table_s[b] : second.at(b);
    out_us[b - 1] = s * 1e6;
  }
  return out_us;
}

}  // namespace lull::compiler
