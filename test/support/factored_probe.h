#pragma once
// Looks inside the factored solver (compiler/solver/factored) on the CPU
// executor: one transition row, Q values, a power iteration under a given
// policy. Tests compare these with the spec's literal sums and hand-derived
// answers; nothing here computes transitions itself.
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/solver/factored/cpu_exec.h"
#include "compiler/solver/factored/pipeline_solve.h"

namespace lull::test {

class FactoredProbe {
 public:
  explicit FactoredProbe(const compiler::MdpProblem& p)
      : p_(p), tables_(compiler::factored::build_exec_tables(p, ex_)) {}

  const compiler::factored::ExecTables<compiler::factored::CpuExec>& tables() const { return tables_; }

  // The distribution after one step from state s under action a, not renormalized.
  std::vector<double> raw_row(int s, int a) {
    std::vector<int> choice(p_.num_states(), -1);
    choice[s] = a;
    std::vector<double> start(p_.num_states(), 0.0);
    start[s] = 1.0;
    auto dist = ex_.upload(start);
    auto next = ex_.template zeros<double>(p_.num_states());
    compiler::factored::PowerStep<compiler::factored::CpuExec> step(p_, tables_, choice, ex_);
    step.raw(dist, next);
    return ex_.download(next);
  }

  // Q(s, a) for every action a (indexed as MdpProblem::actions) given values V.
  std::vector<double> q_values(const std::vector<double>& V) {
    compiler::factored::ValueStep<compiler::factored::CpuExec> step(tables_, ex_);
    step.expected_next_values(ex_.upload(V));
    std::vector<double> q(p_.actions.size());
    for (int s = 0; s < p_.num_states(); ++s)
      for (int a = p_.action_begin[s]; a < p_.action_begin[s + 1]; ++a)
        q[a] =
            compiler::factored::q_value(tables_.d, tables_.actions(), tables_.phase.data(), tables_.count_prob.data(),
                                        V.data(), step.U.data(), step.U_idle.data(), s, a);
    return q;
  }

  // Exactly `steps` power-iteration steps from (0, 0) under `choice`, and the
  // expectations of that distribution, as the solver computes them.
  compiler::SolverOutput stationary(const std::vector<int>& choice, int steps) {
    compiler::SolverOutput out;
    out.choice = choice;
    compiler::SolveOptions o;
    o.max_stationary_steps = steps;
    o.stationary_tolerance = -1;  // never stop early
    compiler::factored::run_stationary(p_, tables_, o, ex_, out);
    return out;
  }

 private:
  const compiler::MdpProblem& p_;
  compiler::factored::CpuExec ex_{compiler::factored::CpuExec::Threads::kNever};
  compiler::factored::ExecTables<compiler::factored::CpuExec> tables_;
};

}  // namespace lull::test
