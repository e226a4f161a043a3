#include "compiler/profile/latency_reduction.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lull::compiler {

double percentile_linear(std::vector<double> samples, double pct) {
  // Only the order statistics lo and lo+1 matter: nth_element finds them in
  // linear time (a full sort of every batch size's samples took most of the
  // reduction on the artifact's 2 M samples); the result is the same.
  const double h = (static_cast<double>(samples.size()) - 1.0) * pct / 100.0;
  const auto lo = std::min(static_cast<std::size_t>(std::floor(h)), samples.size() - 1);
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(lo), samples.end());
  const double at_lo = samples[lo];
  if (lo + 1 >= samples.size()) return at_lo;
  const double at_hi = *std::min_element(samples.begin() + static_cast<std::ptrdiff_t>(lo) + 1, samples.end());
  return at_lo + (h - static_cast<double>(lo)) * (at_hi - at_lo);
}

std::vector<std::size_t> far_out_samples(const std::vector<double>& samples, double* fence) {
  if (samples.size() < 4) return {};
  const double q1 = percentile_linear(samples, 25), q3 = percentile_linear(samples, 75);
  const double median = percentile_linear(samples, 50);
  const double limit = std::max(q3 + 3 * (q3 - q1), 1.5 * median);
  if (fence) *fence = limit;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (samples[i] > limit) out.push_back(i);
  if (out.size() > std::max<std::size_t>(1, samples.size() / 50)) out.clear();
  return out;
}

OlsLine fit_ols(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
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
    for (const auto& [b, v] : measured_s) {
      xs.push_back(b);
      ys.push_back(v);
    }
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
  for (int b = 1; b <= bp; ++b) {
    xs.push_back(b);
    ys.push_back(table_s[b]);
  }
  const OlsLine second = fit_ols(xs, ys);

  std::vector<double> out_us(static_cast<std::size_t>(max_queue) + 1);
  for (int b = 1; b <= max_queue + 1; ++b) {
    const double s = (b <= bp && b <= max_queue) ? table_s[b] : second.at(b);
    out_us[b - 1] = s * 1e6;
  }
  return out_us;
}

}  // namespace lull::compiler
