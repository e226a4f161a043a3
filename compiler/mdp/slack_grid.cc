#include "compiler/mdp/slack_grid.h"

#include <algorithm>

namespace lull::compiler {

std::vector<double> fld_grid_us(double slo_us, int intervals) {
  std::vector<double> grid(static_cast<std::size_t>(intervals) + 1);
  for (int j = 0; j <= intervals; ++j) grid[j] = j * slo_us / intervals;
  grid.back() = slo_us;
  return grid;
}

std::vector<double> md_grid_us(double slo_us, const std::vector<ModelTable>& models, int max_queue) {
  std::vector<double> grid{0.0, slo_us};
  for (const auto& m : models)
    for (int b = 1; b <= max_queue; ++b)
      if (m.lat_us(b) <= slo_us) grid.push_back(m.lat_us(b));
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

int slack_index(const std::vector<double>& grid_us, double slack_us) {
  const auto it = std::upper_bound(grid_us.begin(), grid_us.end(), slack_us);
  return std::max(0, static_cast<int>(it - grid_us.begin()) - 1);
}

}  // namespace lull::compiler
