#include "compiler/compile_sweep.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "compiler/parallel_for.h"
#include "schema/model_capacity.h"

namespace lull::compiler {

double capacity_qps(const ReducedProfiles& profiles, int workers, int max_queue) {
  return fastest_model_capacity_qps(profiles.models.front().latency_us, max_queue, workers);
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

LoadReport compile_load(const ReducedProfiles& profiles, const CompileSpec& spec, double load_qps, Solver& solver,
                        schema::Policy* policy) {
  MdpOptions o = spec.mdp;
  o.load_qps = load_qps;
  const MdpProblem problem = build_mdp_problem(profiles, o);
  const SolverOutput out = solver.solve(problem, spec.solve);
  if (policy) *policy = make_policy(problem, out, spec, profiles.task);
  LoadReport r;
  r.load_qps = load_qps;
  r.expected_accuracy = out.expected_accuracy;
  r.expected_violation_rate = out.expected_violation_rate;
  r.states = problem.num_states();
  r.actions = problem.actions.size();
  r.seconds = out.seconds;
  r.stationary_steps = out.stationary_steps;
  r.residual = out.residual;
  r.table_bytes = out.table_bytes;
  r.beyond_capacity = load_qps > capacity_qps(profiles, spec.mdp.workers, spec.mdp.max_queue);
  return r;
}

SweepResult run_sweep(const SweepRequest& req, Solver& solver, const SweepProgress& progress) {
  const CompileSpec& spec = req.spec;
  check_slo_feasible(req.profiles, spec.mdp.slo_us);
  SweepResult result;
  result.set = make_policy_set_header(req.profiles, spec.mdp);
  std::vector<double> loads = spec.loads_qps;
  std::sort(loads.begin(), loads.end());
  loads.erase(std::unique(loads.begin(), loads.end()), loads.end());
  const int count = static_cast<int>(loads.size());
  std::vector<schema::Policy> policies(count);
  result.reports.resize(count);
  int done = 0;
  // Loads are independent: with a CPU solver each one runs on its own thread
  // (coarse-grained parallelism survives a busy machine far better than the
  // solver's inner loops, which then run serially as a nested region).
  parallel_for_each(count, solver.concurrent_solves() && count > 1, [&](int i) {
    const LoadReport& r = result.reports[i] = compile_load(req.profiles, spec, loads[i], solver, &policies[i]);
#pragma omp critical(lull_sweep_progress)
    {
      ++done;
      if (progress) progress(done, count, r);
    }
  });
  for (auto& p : policies) *result.set.add_policies() = std::move(p);
  return result;
}

}  // namespace lull::compiler
