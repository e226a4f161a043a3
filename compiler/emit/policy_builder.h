#pragma once
// Turns solver output into the policy schema: one Policy per load, collected
// into a PolicySet for one task / SLO / worker count.
#include <string>

#include "compiler/compile_spec.h"
#include "compiler/mdp/mdp_problem.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

// The policy's inputs record the problem's MDP settings and, from the spec,
// the percentile, the horizon and the solver mode (solver_mode(spec)).
schema::Policy make_policy(const MdpProblem& problem, const SolverOutput& solved, const CompileSpec& spec,
                           const std::string& task);

// Set header: task, SLO, workers, the models (with their reduced latencies).
schema::PolicySet make_policy_set_header(const ReducedProfiles& profiles, const MdpOptions& options);

}  // namespace lull::compiler
