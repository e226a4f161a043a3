#include "compiler/compile_sweep.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace lull::compiler {

double capacity_qps(const ReducedProfiles& profiles, int workers, int max_queue) {
  const auto& m0 = profiles.models.front();
  double best = 0;
  for (int b = 1; b <= max_queue; ++b) best = std::max(best, b / m0.lat_us(b));
  return best * 1e6 * workers;
}

void check_slo_feasible(const ReducedProfiles& profiles, double slo_us) {
  const auto& m0 = profiles.models.front();
  if (slo_us < m0.lat_us(1)) {
    std::ostringstream s;
    s << "--slo-ms " << slo_us / 1000.0 << " is below the fastest model's batch-1 latency (" << m0.name << ": "
      << m0.lat_us(1) / 1000.0 << " ms); no query could meet it";
    throw std::invalid_argument(s.str());
  }
}

SweepResult run_sweep(const SweepRequest& req, Solver& solver, const SweepProgress& progress) {
  check_slo_feasible(req.profiles, req.base.slo_us);
  SweepResult result;
  result.set = make_policy_set_header(req.profiles, req.base);
  std::vector<double> loads = req.loads_qps;
  std::sort(loads.begin(), loads.end());
  loads.erase(std::unique(loads.begin(), loads.end()), loads.end());
  const double capacity = capacity_qps(req.profiles, req.base.workers, req.base.max_queue);
  for (std::size_t i = 0; i < loads.size(); ++i) {
    MdpOptions o = req.base;
    o.load_qps = loads[i];
    const MdpProblem problem = build_mdp_problem(req.profiles, o);
    const SolverOutput out = solver.solve(problem, req.solve);
    *result.set.add_policies() = make_policy(problem, out, req.context);
    LoadReport r;
    r.load_qps = loads[i];
    r.expected_accuracy = out.expected_accuracy;
    r.expected_violation_rate = out.expected_violation_rate;
    r.states = problem.num_states();
    r.actions = problem.actions.size();
    r.seconds = out.seconds;
    r.stationary_steps = out.stationary_steps;
    r.residual = out.residual;
    r.table_bytes = out.table_bytes;
    r.beyond_capacity = loads[i] > capacity;
    result.reports.push_back(r);
    if (progress) progress(static_cast<int>(i) + 1, static_cast<int>(loads.size()), r);
  }
  return result;
}

}  // namespace lull::compiler
