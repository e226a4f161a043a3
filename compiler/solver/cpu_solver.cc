// The CPU backend: value iteration and the stationary distribution over the
// factored transitions, parallel with OpenMP.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "compiler/mdp/transition_tables.h"
#include "compiler/solver/factored_operator.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class CpuSolver final : public Solver {
 public:
  std::string name() const override { return "cpu"; }

  SolverOutput solve(const MdpProblem& p, const SolveOptions& opt) override {
    SolverOutput out;
    auto t0 = std::chrono::steady_clock::now();
    const TransitionTables tables = build_transition_tables(p);
    out.table_bytes = tables.bytes();
    out.seconds.build = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    FactoredOperator op(p, tables);
    const int S = p.num_states();
    const int idle = p.state(1, p.J1() - 1);
    std::vector<double> V(S, 0.0), Vn(S, 0.0), U;
    out.choice.assign(S, -1);
    for (int t = 0; t < opt.horizon; ++t) {
      op.expected_next_values(V, U);
#pragma omp parallel for schedule(dynamic, 32)
      for (int s = 0; s < S; ++s) {
        const int a0 = p.action_begin[s], a1 = p.action_begin[s + 1];
        if (a0 == a1) {  // n = 0: never reached, moves to (1, J)
          Vn[s] = V[idle];
          continue;
        }
        double best = op.q_value(s, a0, V, U);
        int arg = a0;
        for (int a = a0 + 1; a < a1; ++a) {
          const double q = op.q_value(s, a, V, U);
          if (q > best) {  // ties go to the first action
            best = q;
            arg = a;
          }
        }
        Vn[s] = best;
        out.choice[s] = arg;
      }
      if (t + 1 == opt.horizon) {
        double lo = INFINITY, hi = -INFINITY;
        for (int s = 0; s < S; ++s) {
          lo = std::min(lo, Vn[s] - V[s]);
          hi = std::max(hi, Vn[s] - V[s]);
        }
        out.residual = opt.horizon > 0 ? hi - lo : 0;
      }
      V.swap(Vn);
    }
    out.values = V;
    out.seconds.solve = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    std::vector<double> dist(S, 0.0), next;
    dist[p.state(0, 0)] = 1.0;
    int steps = 0;
    for (; steps < opt.max_stationary_steps; ++steps) {
      op.step_distribution(out.choice, dist, next);
      double change = 0;
      for (int s = 0; s < S; ++s) change += std::fabs(next[s] - dist[s]);
      dist.swap(next);
      if (change < opt.stationary_tolerance) {
        ++steps;
        break;
      }
    }
    out.stationary = std::move(dist);
    out.stationary_steps = steps;
    fill_expectations(p, out);
    out.seconds.expect = seconds_since(t0);
    return out;
  }
};

}  // namespace

void fill_expectations(const MdpProblem& p, SolverOutput& out) {
  double total = 0, missed = 0, met = 0, met_acc = 0;
  for (int s = 0; s < p.num_states(); ++s) {
    const int a = out.choice[s];
    if (a < 0) continue;
    const double w = out.stationary[s] * p.served(a);
    total += w;
    if (p.actions[a].meets_slo) {
      met += w;
      met_acc += w * p.accuracy[p.actions[a].model];
    } else {
      missed += w;
    }
  }
  out.expected_violation_rate = total > 0 ? missed / total : 0;
  out.expected_accuracy = met > 0 ? met_acc / met : 0;
}

std::unique_ptr<Solver> make_cpu_solver() { return std::make_unique<CpuSolver>(); }

}  // namespace lull::compiler
