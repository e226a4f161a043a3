#pragma once
// Hand-made profiles for tests that need no ../shared data, and the backend
// comparison used by the CUDA tests: which states choose differently, and
// whether each difference is a floating-point tie (both actions' Q values
// equal to 1e-12 relative under the CPU backend's V_{H-1}, so either is optimal).
#include <cmath>
#include <sstream>
#include <string>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/mdp/transition_tables.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/factored_operator.h"
#include "compiler/solver/solver.h"

namespace lull::test {

// `count` models, fastest first, lat(b) = base + slope * b (microseconds).
inline compiler::ReducedProfiles linear_models(int count, int max_queue, double base_us = 8000, double slope_us = 3000) {
  compiler::ReducedProfiles r;
  r.task = "test";
  for (int m = 0; m < count; ++m) {
    compiler::ModelTable t;
    t.name = "m" + std::to_string(m);
    t.accuracy = 0.6 + 0.25 * m / std::max(1, count - 1);
    for (int b = 1; b <= max_queue + 1; ++b) t.latency_us.push_back((base_us + slope_us * b) * (1 + 0.6 * m));
    r.models.push_back(t);
  }
  return r;
}

struct BackendComparison {
  int differing = 0;          // states whose chosen actions differ
  int differing_not_tie = 0;  // ... where the CPU's Q values do not tie
  double max_value_diff = 0;  // relative to max(1, |V|)
  double accuracy_diff = 0, violation_diff = 0;
  std::string first;          // a readable description of the first difference
};

inline BackendComparison compare_backends(const compiler::MdpProblem& p, const compiler::SolverOutput& cpu,
                                          const compiler::SolverOutput& other, int horizon = 100) {
  BackendComparison c;
  c.accuracy_diff = std::fabs(cpu.expected_accuracy - other.expected_accuracy);
  c.violation_diff = std::fabs(cpu.expected_violation_rate - other.expected_violation_rate);
  for (int s = 0; s < p.num_states(); ++s)
    c.max_value_diff = std::max(c.max_value_diff, std::fabs(cpu.values[s] - other.values[s]) / std::max(1.0, std::fabs(cpu.values[s])));
  compiler::SolverOutput prev;
  const compiler::TransitionTables tables = compiler::build_transition_tables(p);
  compiler::FactoredOperator op(p, tables);
  std::vector<double> U;
  bool have_q = false;
  for (int s = 0; s < p.num_states(); ++s) {
    const int a = cpu.choice[s], b = other.choice[s];
    if (a == b) continue;
    ++c.differing;
    if (!have_q) {  // Q values at the last step need V_{H-1}
      compiler::SolveOptions o;
      o.horizon = horizon - 1;
      prev = compiler::make_cpu_solver()->solve(p, o);
      op.expected_next_values(prev.values, U);
      have_q = true;
    }
    const double qa = a < 0 ? 0 : op.q_value(s, a, prev.values, U);
    const double qb = b < 0 ? 0 : op.q_value(s, b, prev.values, U);
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
