#include "runtime/sim/model_switching.h"

#include <algorithm>
#include <numeric>

#include "runtime/sim/arrivals.h"
#include "runtime/sim/simulator.h"

namespace lull::sim {
namespace {

// Model indices from the most accurate down (ties: lower index first).
std::vector<int> by_accuracy(const core::PolicyTable& table) {
  std::vector<int> order(table.models.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return table.models[a].accuracy > table.models[b].accuracy; });
  return order;
}

}  // namespace

int model_switching_choice(const core::PolicyTable& table, const std::vector<double>& violation_rate) {
  for (int m : by_accuracy(table))
    if (m < static_cast<int>(violation_rate.size()) && violation_rate[m] >= 0 &&
        violation_rate[m] < kModelSwitchingMaxViolation)
      return m;
  return core::fastest_model(table);
}

std::vector<core::BaselineChoice> model_switching_plan(const core::PolicyTable& table, LatencyModel& latency,
                                                       const SimOptions& options, std::vector<OfflineTrial>* trials) {
  SimOptions offline = options;
  offline.timeline = false;
  offline.dispatch_end_s = options.model_switching_profile_s;  // the reference's end rule
  std::vector<core::BaselineChoice> plan;
  for (std::size_t g = 0; g < table.policies.size(); ++g) {
    const double load = table.policies[g].load_qps;
    const int cap = core::model_switching_cap(table, load);
    std::vector<double> violation(table.models.size(), -1.0);
    for (int m : by_accuracy(table)) {
      const std::vector<core::BaselineChoice> fixed(table.policies.size(), core::BaselineChoice{m, cap});
      // The same arrivals for every model of a grid point.
      RateArrivals arrivals({RateSegment{0, options.model_switching_profile_s, load}}, ArrivalProcess{},
                            options.seed * 1000003u + g);
      const SimResult r = run_simulation(table, &fixed, arrivals, latency, offline);
      violation[m] = r.violation_rate;
      if (trials) trials->push_back(OfflineTrial{static_cast<int>(g), m, cap, r.completed, r.violation_rate});
      if (r.violation_rate < kModelSwitchingMaxViolation) break;
    }
    plan.push_back(core::BaselineChoice{model_switching_choice(table, violation), cap});
  }
  return plan;
}

}  // namespace lull::sim
