#include "compiler/adaptive_loads.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include "schema/input_limits.h"
#include "schema/number_text.h"

namespace lull::compiler {

void validate_adaptive_loads(const AdaptiveLoads& g) {
  if (!(g.lo_qps > 0 && g.hi_qps > g.lo_qps && g.hi_qps <= limits::kMaxLoadQps))
    throw std::invalid_argument("--load-qps auto:LO:HI needs 0 < LO < HI <= " + number_text(limits::kMaxLoadQps) +
                                " (got " + number_text(g.lo_qps) + ":" + number_text(g.hi_qps) + ")");
  if (!(g.max_accuracy_gap > 0)) throw std::invalid_argument("adaptive load grid: the accuracy gap must be positive");
}

AdaptiveSweep run_adaptive_sweep(const SweepRequest& request, const AdaptiveLoads& grid, Solver& solver,
                                 const SweepProgress& progress) {
  validate_adaptive_loads(grid);
  std::map<double, std::pair<schema::Policy, LoadReport>> done;
  std::vector<double> next = {grid.lo_qps, grid.hi_qps};
  AdaptiveSweep out;
  int compiled = 0;
  while (!next.empty()) {
    ++out.rounds;
    SweepRequest round{request.profiles, request.spec};
    round.spec.loads_qps = next;
    const int before = compiled;
    // The total is not known ahead: progress counts the loads so far.
    SweepResult r = run_sweep(round, solver, [&](int d, int, const LoadReport& last) {
      if (progress) progress(before + d, before + static_cast<int>(next.size()), last);
    });
    compiled += r.set.policies_size();
    if (out.sweep.set.models_size() == 0) {
      out.sweep.set = r.set;
      out.sweep.set.clear_policies();
    }
    for (int i = 0; i < r.set.policies_size(); ++i)
      done[r.reports[static_cast<std::size_t>(i)].load_qps] = {r.set.policies(i),
                                                               r.reports[static_cast<std::size_t>(i)]};
    next.clear();
    for (auto it = done.begin(); std::next(it) != done.end(); ++it) {
      const auto nx = std::next(it);
      const double gap = std::abs(it->second.second.expected_accuracy - nx->second.second.expected_accuracy);
      if (gap > grid.max_accuracy_gap && nx->first - it->first >= 2 * grid.min_step_qps)
        next.push_back(std::round((it->first + nx->first) / 2 / grid.min_step_qps) * grid.min_step_qps);
    }
    // Rounding to the step may land on a load that is already there.
    std::vector<double> fresh;
    for (double l : next)
      if (!done.count(l)) fresh.push_back(l);
    next = fresh;
  }
  for (auto& [load, pr] : done) {
    *out.sweep.set.add_policies() = std::move(pr.first);
    out.sweep.reports.push_back(pr.second);
  }
  return out;
}

}  // namespace lull::compiler
