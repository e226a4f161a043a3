#pragma once
// Compares two solvers' outputs on one problem: which states choose
// differently, and whether each difference is a floating-point tie (both
// actions' Q values equal to 1e-12 relative under the CPU solver's V_{H-1},
// so either is optimal). Used by the CPU-vs-CUDA tests.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/solver/solver.h"
#include "test/support/factored_probe.h"
#include "test/support/synthetic_profiles.h"

namespace lull::test {

struct BackendComparison {
  int differing = 0;          // states whose chosen actions differ
  int differing_not_tie = 0;  // ... where the CPU's Q values do not tie
  double max_value_diff = 0;  // relative to max(1, |V|)
  double accuracy_diff = 0, violation_diff = 0;
  std::string first;  // a readable description of the first difference
};

inline BackendComparison compare_backends(const compiler::MdpProblem& p, const compiler::SolverOutput& cpu,
                                          const compiler::SolverOutput& other, int horizon = 100) {
  BackendComparison c;
  c.accuracy_diff = std::fabs(cpu.expected_accuracy - other.expected_accuracy);
  c.violation_diff = std::fabs(cpu.expected_violation_rate - other.expected_violation_rate);
  for (int s = 0; s < p.num_states(); ++s)
    c.max_value_diff = std::max(c.max_value_diff,
                                std::fabs(cpu.values[s] - other.values[s]) / std::max(1.0, std::fabs(cpu.values[s])));
  FactoredProbe probe(p);
  std::vector<double> q;
  for (int s = 0; s < p.num_states(); ++s) {
    const int a = cpu.choice[s], b = other.choice[s];
    if (a == b) continue;
    ++c.differing;
    if (q.empty()) {  // Q values at the last step need V_{H-1}
      compiler::SolveOptions o;
      o.horizon = horizon - 1;
      q = probe.q_values(compiler::make_cpu_solver()->solve(p, o).values);
    }
    const double qa = a < 0 ? 0 : q[a];
    const double qb = b < 0 ? 0 : q[b];
    const bool tie = a >= 0 && b >= 0 && std::fabs(qa - qb) <= 1e-12 * std::max(1.0, std::fabs(qa));
    if (!tie) ++c.differing_not_tie;
    if (c.first.empty()) {
      std::ostringstream m;
      m << "state (n=" << p.n_of(s) << ", j=" << p.j_of(s) << "): cpu action " << a << " Q " << qa << ", other " << b
        << " Q " << qb << (tie ? " (a tie)" : "");
      c.first = m.str();
    }
  }
  return c;
}

}  // namespace lull::test
