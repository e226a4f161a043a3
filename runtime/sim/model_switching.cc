#include "runtime/sim/model_switching.h"

#include <algorithm>
#include <numeric>

#include "runtime/sim/arrivals.h"
#include "runtime/sim/simulator.h"

namespace lull::sim {

int model_switching_batch_cap(const runtime::PolicyTable& table, int model, double load_qps) {
  const int cap = runtime::jellyfish_max_batch(table, model, load_qps);
  if (cap > 0) return cap;
  int best = 1;
  const auto& lat = table.models[model].latency_us;
  for (int b = 1; b <= runtime::baseline_batch_limit(table); ++b)
    if (lat[b - 1] <= static_cast<double>(table.slo_us) / 2) best = b;
  return best;
}

std::vector<runtime::BaselineChoice> model_switching_plan(const runtime::PolicyTable& table, LatencyModel& latency,
                                                          const SimOptions& options) {
  std::vector<int> by_accuracy(table.models.size());
  std::iota(by_accuracy.begin(), by_accuracy.end(), 0);
  std::stable_sort(by_accuracy.begin(), by_accuracy.end(),
                   [&](int a, int b) { return table.models[a].accuracy > table.models[b].accuracy; });
  SimOptions offline = options;
  offline.timeline = false;
  offline.keep_latencies = true;
  std::vector<runtime::BaselineChoice> plan;
  for (std::size_t g = 0; g < table.policies.size(); ++g) {
    const double load = table.policies[g].load_qps;
    runtime::BaselineChoice choice{0, model_switching_batch_cap(table, 0, load)};
    for (int m : by_accuracy) {
      const runtime::BaselineChoice candidate{m, model_switching_batch_cap(table, m, load)};
      const std::vector<runtime::BaselineChoice> fixed(table.policies.size(), candidate);
      RateArrivals arrivals({RateSegment{0, options.model_switching_profile_s, load}}, ArrivalProcess{},
                            options.seed * 1000003u + g);
      const SimResult r = run_simulation(table, &fixed, arrivals, latency, offline);
      if (r.p99_latency_us <= static_cast<double>(table.slo_us)) {
        choice = candidate;
        break;
      }
    }
    plan.push_back(choice);
  }
  return plan;
}

}  // namespace lull::sim
