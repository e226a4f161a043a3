#pragma once
// Turns solver output into the policy schema: one Policy per load, collected
// into a PolicySet for one task / SLO / worker count.
#include <string>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

struct PolicyContext {
  std::string task;
  double percentile = 95;
  std::string solver_mode = "reference";
};

schema::Policy make_policy(const MdpProblem& problem, const SolverOutput& solved, const PolicyContext& ctx);

// Set header: task, SLO, workers, the models (with their reduced latencies).
schema::PolicySet make_policy_set_header(const ReducedProfiles& profiles, const MdpOptions& options);

}  // namespace lull::compiler
