// The shared worker-count rule (why: see count_rule.h).
#include "schema/count_rule.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace lull {

std::vector<std::pair<double, double>> load_estimate_shares(const std::vector<std::int64_t>& t, double scale,
                                                            std::int64_t window_us, std::size_t first_counted) {
  if (first_counted >= t.size() || !(scale > 0) || window_us <= 0)
    throw std::invalid_argument("load estimates: no arrivals, or a bad scale or window");
  // Scaling the rates by `scale` shrinks time by it: the window covers window * scale of the trace.
  const double reach = static_cast<double>(window_us) * scale;
  std::map<long, double> by_count;
  std::size_t first = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    while (static_cast<double>(t[i] - t[first]) >= reach) ++first;
    if (i >= first_counted) by_count[static_cast<long>(i - first + 1)] += 1;
  }
  std::vector<std::pair<double, double>> out;
  const double n = static_cast<double>(t.size() - first_counted), per_s = 1e6 / static_cast<double>(window_us);
  for (const auto& [count, arrivals] : by_count) out.emplace_back(static_cast<double>(count) * per_s, arrivals / n);
  return out;
}

GridFigures envelope_mixture(const std::vector<std::pair<double, double>>& shares, const std::vector<GridFigures>& grid,
                             bool beyond_top_missed) {
  if (grid.empty()) throw std::invalid_argument("envelope mixture: no grid loads");
  const GridFigures missed{0, 0, 1};
  GridFigures m;
  double weight = 0, satisfied = 0, accuracy = 0;
  for (const auto& [load, share] : shares) {
    auto it =
        std::lower_bound(grid.begin(), grid.end(), load, [](const GridFigures& g, double l) { return g.load_qps < l; });
    const GridFigures& g = it != grid.end() ? *it : beyond_top_missed ? missed : grid.back();
    weight += share;
    m.load_qps += share * load;
    m.violation += share * g.violation;
    satisfied += share * (1 - g.violation);
    accuracy += share * (1 - g.violation) * g.accuracy;
  }
  m.load_qps /= weight;
  m.violation /= weight;
  m.accuracy = satisfied > 0 ? accuracy / satisfied : 0;
  return m;
}

int fewest_count_meeting(int hint, int max_count, const std::function<bool(int)>& meets) {
  if (max_count < 1) return 0;
  int lo = 0, hi = std::min(std::max(hint, 1), max_count);
  for (int stride = 1; !meets(hi); stride *= 2) {
    lo = hi;
    if (hi == max_count) return 0;
    hi = std::min(max_count, hi + stride);
  }
  if (lo == 0) {  // the hint meets already: walk down
    lo = hi;
    while (lo > 1 && meets(lo - 1)) --lo;
    hi = lo;
    lo = hi - 1;
  }
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (meets(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace lull
