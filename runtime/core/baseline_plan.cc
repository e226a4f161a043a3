#include "runtime/core/baseline_plan.h"

#include <algorithm>

namespace lull::core {
namespace {

// The most accurate model with a feasible batch at `factor` (ties: the lower
// index) and that batch; {-1, 0} when no model has one.
BaselineChoice most_accurate_feasible(const PolicyTable& table, double load_qps, double factor) {
  BaselineChoice best{-1, 0};
  double best_acc = -1;
  for (int m = 0; m < static_cast<int>(table.models.size()); ++m) {
    const int b = feasible_batch(table, m, load_qps, factor);
    if (b > 0 && table.models[m].accuracy > best_acc) {
      best_acc = table.models[m].accuracy;
      best = BaselineChoice{m, b};
    }
  }
  return best;
}

}  // namespace

int baseline_batch_limit(const PolicyTable& table) {
  std::size_t n = table.models.front().latency_us.size();
  for (const auto& m : table.models) n = std::min(n, m.latency_us.size());
  return std::max<int>(1, static_cast<int>(n) - 1);
}

int fastest_model(const PolicyTable& table) {
  int fastest = 0;
  for (int m = 1; m < static_cast<int>(table.models.size()); ++m)
    if (table.models[m].latency_us.front() < table.models[fastest].latency_us.front()) fastest = m;
  return fastest;
}

int feasible_batch(const PolicyTable& table, int model, double load_qps, double factor) {
  const double per_worker_qps = load_qps / table.workers;
  const double half_slo_us = static_cast<double>(table.slo_us) / 2;
  const auto& lat = table.models[model].latency_us;
  int best = 0;
  for (int b = 1; b <= baseline_batch_limit(table); ++b) {
    const double lat_us = lat[b - 1];
    if (lat_us <= half_slo_us && b / (lat_us * 1e-6) >= factor * per_worker_qps) best = b;
  }
  return best;
}

std::vector<BaselineChoice> jellyfish_plan(const PolicyTable& table) {
  std::vector<BaselineChoice> plan;
  for (const auto& p : table.policies) {
    const BaselineChoice best = most_accurate_feasible(table, p.load_qps, kJellyfishHeadroom);
    plan.push_back(best.model >= 0 ? best : BaselineChoice{fastest_model(table), baseline_batch_limit(table)});
  }
  return plan;
}

int model_switching_cap(const PolicyTable& table, double load_qps) {
  const BaselineChoice best = most_accurate_feasible(table, load_qps, 1.0);
  return best.model >= 0 ? best.max_batch : baseline_batch_limit(table);
}

}  // namespace lull::core
