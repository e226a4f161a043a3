#pragma once
// The two products every solver needs with the factored transitions of
// transition_tables.h, on the CPU:
//  - backward: for every tau and phase q, U[tau][q] = E[V(next state)];
//    then Q(s, a) = R(s, a) + phase(s) . U[tau(a)].
//  - forward: the next-step distribution under a fixed policy.
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/mdp/transition_tables.h"

namespace lull::compiler {

class FactoredOperator {
 public:
  FactoredOperator(const MdpProblem& problem, const TransitionTables& tables);

  // U (num_taus x K) from values V (num_states).
  void expected_next_values(const std::vector<double>& V, std::vector<double>& U);

  // Q value of action a in state s.
  double q_value(int s, int a, const std::vector<double>& V, const std::vector<double>& U) const;

  // p_next = P_pi^T p for the policy `choice`. Rows are renormalized to sum 1
  // (mdp-spec 4.3) unless `normalize` is false (tests check the raw mass).
  void step_distribution(const std::vector<int>& choice, const std::vector<double>& p, std::vector<double>& p_next,
                         bool normalize = true);

 private:
  double next_value(int n, int j, const std::vector<double>& V) const;  // n > N -> F

  const MdpProblem& p_;
  const TransitionTables& t_;
  std::vector<double> fv_, bk_, alive_, mass_;
  std::vector<std::vector<int>> jlo_groups_;
};

}  // namespace lull::compiler
