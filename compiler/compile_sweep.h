#pragma once
// Compiles one policy per load for one task / SLO / worker count: the
// compiler's model -> solve -> emit pipeline, with a report line per load.
#include <functional>
#include <string>
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/emit/policy_builder.h"
#include "compiler/mdp/mdp_problem.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

// One sweep: the reduced profiles (compile_inputs.h) and the spec that says
// everything else (the loads, the MDP, the solver).
struct SweepRequest {
  ReducedProfiles profiles;
  CompileSpec spec;
};

struct LoadReport {
  double load_qps = 0;
  double expected_accuracy = 0;
  double expected_violation_rate = 0;
  int states = 0;
  std::size_t actions = 0;
  PhaseSeconds seconds;
  int stationary_steps = 0;
  double residual = 0;
  std::size_t table_bytes = 0;
  bool beyond_capacity = false;  // the fastest model cannot keep up at this load
};

struct SweepResult {
  schema::PolicySet set;
  std::vector<LoadReport> reports;
};

// Largest central load (QPS) the workers can serve with the fastest model at
// its best batch size: K * max_b b / lat(0, b).
double capacity_qps(const ReducedProfiles& profiles, int workers, int max_queue);

// Throws std::invalid_argument naming the fastest model when the SLO is below
// its batch-1 latency.
void check_slo_feasible(const ReducedProfiles& profiles, double slo_us);

// One load of a sweep: builds the MDP for spec.mdp at `load_qps`, solves it
// and returns its report; fills `policy` when given. Every caller that
// compiles a policy (sweeps, the adaptive load grid, the planner) goes
// through here.
LoadReport compile_load(const ReducedProfiles& profiles, const CompileSpec& spec, double load_qps, Solver& solver,
                        schema::Policy* policy = nullptr);

using SweepProgress = std::function<void(int done, int total, const LoadReport& last)>;

SweepResult run_sweep(const SweepRequest& request, Solver& solver, const SweepProgress& progress = nullptr);

}  // namespace lull::compiler
