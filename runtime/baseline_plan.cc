#include "runtime/baseline_plan.h"

#include <algorithm>

namespace lull::runtime {

int baseline_batch_limit(const PolicyTable& table) {
  std::size_t n = table.models.front().latency_us.size();
  for (const auto& m : table.models) n = std::min(n, m.latency_us.size());
  return std::max<int>(1, static_cast<int>(n) - 1);
}

int jellyfish_max_batch(const PolicyTable& table, int model, double load_qps) {
  const double per_worker_qps = load_qps / table.workers;
  const double half_slo_us = static_cast<double>(table.slo_us) / 2;
  const auto& lat = table.models[model].latency_us;
  int best = 0;
  for (int b = 1; b <= baseline_batch_limit(table); ++b) {
    const double lat_us = lat[b - 1];
    if (lat_us <= half_slo_us && b / (lat_us * 1e-6) >= 1.05 * per_worker_qps) best = b;
  }
  return best;
}

std::vector<BaselineChoice> jellyfish_plan(const PolicyTable& table) {
  std::vector<BaselineChoice> plan;
  for (const auto& p : table.policies) {
    BaselineChoice choice{0, baseline_batch_limit(table)};
    double best_acc = -1;
    for (int m = 0; m < static_cast<int>(table.models.size()); ++m) {
      const int b = jellyfish_max_batch(table, m, p.load_qps);
      if (b > 0 && table.models[m].accuracy > best_acc) {
        best_acc = table.models[m].accuracy;
        choice = BaselineChoice{m, b};
      }
    }
    plan.push_back(choice);
  }
  return plan;
}

}  // namespace lull::runtime
