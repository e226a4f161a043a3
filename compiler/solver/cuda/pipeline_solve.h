#pragma once
// Steps 2 and 3 of the CUDA backend's pipeline, generic over the executor:
// value iteration (reference mode: V_0 = 0, H steps, ties to the first
// action), then the power iteration for the stationary distribution from
// state (0, 0) and the expectations of mdp-spec section 6. Mirrors
// compiler/solver/cpu_solver.cc step for step.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "compiler/solver/cuda/forward_elements.h"
#include "compiler/solver/cuda/pipeline_tables.h"
#include "compiler/solver/solver.h"

namespace lull::compiler::cuda {

template <class Exec>
void run_value_iteration(const MdpProblem& p, const ExecTables<Exec>& t, int horizon, Exec& ex, SolverOutput& out) {
  const Dims d = t.d;
  auto V = ex.template zeros<double>(d.S);
  auto V_next = ex.template zeros<double>(d.S);
  auto fv = ex.template zeros<double>(static_cast<std::size_t>(d.B) * d.K);
  auto bk = ex.template zeros<double>(static_cast<std::size_t>(d.J1) * d.K);
  auto U = ex.template zeros<double>(static_cast<std::size_t>(d.taus) * d.K);
  auto choice = ex.upload(std::vector<int>(d.S, -1));
  for (int step = 0; step < horizon; ++step) {
    ex.for_each(static_cast<std::size_t>(d.B) * d.K, BucketValue{d, t.pass.data(), V.data(), fv.data()});
    ex.sequence(d.J1, d.K, BackwardStep{d, t.kernel.data(), fv.data(), V.data(), bk.data()});
    ex.for_each(static_cast<std::size_t>(d.taus) * d.K,
                TauValue{d, t.tau_pass(), t.tau_kernel(), t.tau_bucket.data(), bk.data(), V.data(), U.data()});
    ex.for_each(d.S, BestAction{d, t.actions(), t.phase.data(), t.count_prob.data(), V.data(), U.data(),
                                V_next.data(), choice.data()});
    if (step + 1 == horizon) {  // residual: span of the last change, as the CPU backend reports it
      const auto a = ex.download(V), b = ex.download(V_next);
      double lo = INFINITY, hi = -INFINITY;
      for (int s = 0; s < d.S; ++s) {
        lo = std::min(lo, b[s] - a[s]);
        hi = std::max(hi, b[s] - a[s]);
      }
      out.residual = hi - lo;
    }
    std::swap(V, V_next);
  }
  out.values = ex.download(V);
  out.choice = ex.download(choice);
  (void)p;
}

template <class Exec>
void run_stationary(const MdpProblem& p, const ExecTables<Exec>& t, const SolveOptions& opt, Exec& ex,
                    SolverOutput& out) {
  const Dims d = t.d;
  const int J = d.J1 - 1, cols = d.cols();
  const PolicyLayout pl = layout_policy(p, t.layout, ex.download(t.tau_bucket), out.choice);
  auto states_begin = ex.upload(pl.states_begin);
  auto states = ex.upload(pl.states);
  auto group_begin = ex.upload(pl.group_begin);
  auto group_taus = ex.upload(pl.group_taus);
  auto in_begin = ex.upload(pl.in_begin);
  auto in_src = ex.upload(pl.in_src);
  auto in_prob = ex.upload(pl.in_prob);
  auto choice = ex.upload(out.choice);

  std::vector<double> start(d.S, 0.0);
  start[p.state(0, 0)] = 1.0;
  auto dist = ex.upload(start);
  auto next = ex.template zeros<double>(d.S);
  auto raw = ex.template zeros<double>(d.S);
  auto mass = ex.template zeros<double>(static_cast<std::size_t>(d.taus) * d.K);
  auto add_cols = ex.template zeros<double>(static_cast<std::size_t>(d.J1) * cols);
  auto alive = ex.template zeros<double>(static_cast<std::size_t>(d.J1) * d.K);
  int steps = 0;
  for (; steps < opt.max_stationary_steps; ++steps) {
    ex.for_each(static_cast<std::size_t>(d.taus) * d.K,
                TauMass{d, states_begin.data(), states.data(), t.phase.data(), dist.data(), mass.data()});
    ex.for_each(static_cast<std::size_t>(J) * d.K,
                GroupAlive{d, group_begin.data(), group_taus.data(), mass.data(), t.tau_kernel(), alive.data()});
    ex.for_each(static_cast<std::size_t>(d.J1) * cols,
                GroupColumns{d, group_begin.data(), group_taus.data(), mass.data(), t.tau_pass(), add_cols.data()});
    ex.sequence(d.B, d.K, ForwardStep{d, t.kernel.data(), alive.data()});
    ex.for_each(d.S, AssembleState{d, in_begin.data(), in_src.data(), in_prob.data(), t.count_prob.data(), dist.data(),
                                   add_cols.data(), t.pass.data(), alive.data(), raw.data()});
    const double total = ex.sum(d.S, Entry{raw.data()});
    ex.for_each(d.S, Normalize{raw.data(), total, next.data()});
    const double change = ex.sum(d.S, AbsDifference{next.data(), dist.data()});
    std::swap(dist, next);
    if (change < opt.stationary_tolerance) {
      ++steps;
      break;
    }
  }
  out.stationary_steps = steps;

  // Expectations (mdp-spec 6): weights w(s) = p(s) b(s), summed on the executor.
  auto term = [&](int part) {
    return ex.sum(d.S, ExpectationTerm{choice.data(), t.a_batch.data(), t.a_meets.data(), t.a_model.data(),
                                       t.accuracy.data(), dist.data(), part});
  };
  const double total = term(0), missed = term(1), met = term(2), met_acc = term(3);
  out.expected_violation_rate = total > 0 ? missed / total : 0;
  out.expected_accuracy = met > 0 ? met_acc / met : 0;
  out.stationary = ex.download(dist);
}

// The whole solve, timed per phase like the CPU backend.
template <class Exec>
SolverOutput solve_factored(const MdpProblem& p, const SolveOptions& opt, Exec& ex) {
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  SolverOutput out;
  auto t0 = clock::now();
  const ExecTables<Exec> tables = build_exec_tables(p, ex);
  ex.sync();
  out.table_bytes = factored_table_bytes(p, tables.layout);
  out.seconds.build = since(t0);

  t0 = clock::now();
  run_value_iteration(p, tables, opt.horizon, ex, out);
  ex.sync();
  out.seconds.solve = since(t0);

  t0 = clock::now();
  run_stationary(p, tables, opt, ex, out);
  ex.sync();
  out.seconds.expect = since(t0);
  return out;
}

}  // namespace lull::compiler::cuda
