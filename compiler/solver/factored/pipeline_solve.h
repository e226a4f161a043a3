#pragma once
// Steps 2 and 3 of the factored solver's pipeline, generic over the executor
// (CpuExec, cuda::DeviceExec): value iteration (reference mode: V_0 = 0, H
// steps, ties to the first action), then the power iteration for the
// stationary distribution from state (0, 0) and the expectations of mdp-spec
// section 6. The only implementation of these in lull; the CPU and the CUDA
// solvers differ only in the executor they pass to solve_factored.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "compiler/solver/factored/forward_elements.h"
#include "compiler/solver/factored/pipeline_tables.h"
#include "compiler/solver/solver.h"

namespace lull::compiler::factored {

// One value-iteration backup over the factored transitions, with its scratch
// buffers: U[tau][q] = E[V(next state) | service time tau, phase q], then the
// best action per state.
template <class Exec>
struct ValueStep {
  const ExecTables<Exec>& t;
  Exec& ex;
  BufferOf<Exec, double> vcol, fv, bk, U, U_idle;

  ValueStep(const ExecTables<Exec>& tables, Exec& exec)
      : t(tables),
        ex(exec),
        vcol(ex.template zeros<double>(static_cast<std::size_t>(t.d.B) * t.d.cols())),
        fv(ex.template zeros<double>(static_cast<std::size_t>(t.d.B) * t.d.K)),
        bk(ex.template zeros<double>(static_cast<std::size_t>(t.d.J1) * t.d.K)),
        U(ex.template zeros<double>(static_cast<std::size_t>(t.d.taus) * t.d.K)),
        U_idle(ex.template zeros<double>(t.d.E > 0 ? t.d.taus : 0)) {}

  void expected_next_values(const BufferOf<Exec, double>& V) {
    const Dims d = t.d;
    ex.for_each(static_cast<std::size_t>(d.B) * d.cols(), ColumnValues{d, V.data(), vcol.data()});
    ex.for_each(static_cast<std::size_t>(d.B) * d.K, BucketValue{d, t.pass.data(), vcol.data(), fv.data()});
    ex.sequence(d.J1, d.K, BackwardStep{d, t.kernel.data(), fv.data(), V.data(), bk.data()});
    ex.for_each(static_cast<std::size_t>(d.taus) * d.K,
                TauValue{d, t.tau_pass(), t.tau_kernel(), t.tau_bucket.data(), bk.data(), vcol.data(), U.data()});
    if (d.E > 0)
      ex.for_each(d.taus, IdleTauValue{d, t.idle_rows.data(), t.tau_bucket.data(), vcol.data(), U_idle.data()});
  }

  // V_next(s) = max_a Q(s, a) and its argmax, from V and the U of expected_next_values(V).
  void best_actions(const BufferOf<Exec, double>& V, BufferOf<Exec, double>& V_next, BufferOf<Exec, int>& choice) {
    ex.for_each(t.d.num_states(), BestAction{t.d, t.actions(), t.phase.data(), t.count_prob.data(), V.data(), U.data(),
                                             U_idle.data(), V_next.data(), choice.data()});
  }
};

template <class Exec>
void run_value_iteration(const ExecTables<Exec>& t, const SolveOptions& opt, Exec& ex, SolverOutput& out) {
  const int horizon = opt.horizon;
  const int S = t.d.num_states();
  auto V = ex.template zeros<double>(S);
  auto V_next = ex.template zeros<double>(S);
  auto choice = ex.upload(std::vector<int>(S, -1));
  ValueStep<Exec> step(t, ex);
  for (int i = 0; i < horizon; ++i) {
    throw_if_cancelled(opt);
    step.expected_next_values(V);
    step.best_actions(V, V_next, choice);
    if (i + 1 == horizon) {  // residual: the span of the last change, max - min of V_H - V_{H-1}
      const auto a = ex.download(V), b = ex.download(V_next);
      double lo = INFINITY, hi = -INFINITY;
      for (int s = 0; s < S; ++s) {
        lo = std::min(lo, b[s] - a[s]);
        hi = std::max(hi, b[s] - a[s]);
      }
      out.residual = hi - lo;
    }
    std::swap(V, V_next);
  }
  out.values = ex.download(V);
  out.choice = ex.download(choice);
}

// One power-iteration step p -> P_pi^T p under a fixed policy, with the index
// lists (pipeline_layout.h) and scratch buffers it needs.
template <class Exec>
class PowerStep {
 public:
  PowerStep(const MdpProblem& p, const ExecTables<Exec>& t, const std::vector<int>& choice, Exec& ex) : t_(t), ex_(ex) {
    const Dims d = t.d;
    const PolicyLayout pl = layout_policy(p, t.layout, ex.download(t.tau_bucket), choice);
    states_begin_ = ex.upload(pl.states_begin);
    states_ = ex.upload(pl.states);
    group_begin_ = ex.upload(pl.group_begin);
    group_taus_ = ex.upload(pl.group_taus);
    in_begin_ = ex.upload(pl.in_begin);
    in_src_ = ex.upload(pl.in_src);
    in_prob_ = ex.upload(pl.in_prob);
    mass_ = ex.template zeros<double>(static_cast<std::size_t>(d.taus) * d.K);
    mass_idle_ = ex.template zeros<double>(d.E > 0 ? d.taus : 0);
    mass_any_ = ex.template zeros<char>(d.taus);
    passed_ = ex.template zeros<double>(static_cast<std::size_t>(d.B) * d.cols());
    add_cols_ = ex.template zeros<double>(static_cast<std::size_t>(d.J1) * d.cols());
    alive_ = ex.template zeros<double>(static_cast<std::size_t>(d.J1) * d.K);
  }

  // raw = P_pi^T p, not renormalized: the mass that leaves each state, which
  // sums to 1 up to the truncation of the Poisson tails (mdp-spec 4.3
  // renormalizes; run_stationary does).
  void raw(const BufferOf<Exec, double>& p, BufferOf<Exec, double>& raw) {
    const Dims d = t_.d;
    const int J = d.J1 - 1;
    ex_.for_each(d.taus, TauMass{d, states_begin_.data(), states_.data(), t_.phase.data(), p.data(), mass_.data(),
                                 mass_idle_.data(), mass_any_.data()});
    ex_.for_each(J, GroupAlive{d, group_begin_.data(), group_taus_.data(), mass_.data(), mass_any_.data(),
                               t_.tau_kernel(), alive_.data()});
    ex_.for_each(d.J1, GroupColumns{d, group_begin_.data(), group_taus_.data(), mass_.data(), mass_idle_.data(),
                                    mass_any_.data(), t_.tau_pass(), t_.idle_rows.data(), add_cols_.data()});
    ex_.sequence(d.B, d.K, ForwardStep{d, t_.kernel.data(), alive_.data()});
    ex_.for_each(d.B, BucketColumns{d, t_.pass.data(), alive_.data(), passed_.data()});
    ex_.for_each(d.num_states(),
                 AssembleState{d, in_begin_.data(), in_src_.data(), in_prob_.data(), t_.count_prob.data(), p.data(),
                               add_cols_.data(), passed_.data(), alive_.data(), raw.data()});
  }

 private:
  const ExecTables<Exec>& t_;
  Exec& ex_;
  BufferOf<Exec, int> states_begin_, states_, group_begin_, group_taus_, in_begin_, in_src_;
  BufferOf<Exec, long long> in_prob_;
  BufferOf<Exec, char> mass_any_;
  BufferOf<Exec, double> mass_, mass_idle_, add_cols_, alive_, passed_;
};

// Expectations of mdp-spec 6 from a distribution over states and a policy,
// summed on the executor: weights w(s) = p(s) b(s), split by whether the
// chosen action meets the SLO. `terms.part` is set here.
template <class Exec>
void sum_expectations(Exec& ex, std::size_t num_states, ExpectationTerm terms, SolverOutput& out) {
  double part[4];
  for (int i = 0; i < 4; ++i) {
    terms.part = i;
    part[i] = ex.sum(num_states, terms);
  }
  const double total = part[0], missed = part[1], met = part[2], met_acc = part[3];
  out.expected_violation_rate = total > 0 ? missed / total : 0;
  out.expected_accuracy = met > 0 ? met_acc / met : 0;
}

template <class Exec>
void run_stationary(const MdpProblem& p, const ExecTables<Exec>& t, const SolveOptions& opt, Exec& ex,
                    SolverOutput& out) {
  const int S = t.d.num_states();
  PowerStep<Exec> step(p, t, out.choice, ex);
  auto choice = ex.upload(out.choice);
  std::vector<double> start(S, 0.0);
  start[p.state(0, 0)] = 1.0;
  auto dist = ex.upload(start);
  auto next = ex.template zeros<double>(S);
  auto raw = ex.template zeros<double>(S);
  int steps = 0;
  for (; steps < opt.max_stationary_steps; ++steps) {
    throw_if_cancelled(opt);
    step.raw(dist, raw);
    const double total = ex.sum(S, Entry{raw.data()});
    ex.for_each(S, Normalize{raw.data(), total, next.data()});
    const double change = ex.sum(S, AbsDifference{next.data(), dist.data()});
    std::swap(dist, next);
    if (change < opt.stationary_tolerance) {
      ++steps;
      break;
    }
  }
  out.stationary_steps = steps;
  sum_expectations(ex, S,
                   ExpectationTerm{choice.data(), t.a_batch.data(), t.a_meets.data(), t.a_model.data(),
                                   t.accuracy.data(), dist.data(), 0},
                   out);
  out.stationary = ex.download(dist);
}

// The whole solve, timed per phase.
template <class Exec>
SolverOutput solve_factored(const MdpProblem& p, const SolveOptions& opt, Exec& ex) {
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  SolverOutput out;
  auto t0 = clock::now();
  const ExecTables<Exec> tables = build_exec_tables(p, ex, opt);
  ex.sync();
  out.table_bytes = factored_table_bytes(p, tables.layout);
  out.seconds.build = since(t0);

  // The steps below repeat up to horizon + max_stationary_steps times; the
  // executor may choose its threading by their size.
  ex.expect_work_per_step(work_per_step(tables.d, tables.layout));
  t0 = clock::now();
  throw_if_cancelled(opt);
  run_value_iteration(tables, opt, ex, out);
  ex.sync();
  out.seconds.solve = since(t0);

  t0 = clock::now();
  run_stationary(p, tables, opt, ex, out);
  ex.sync();
  out.seconds.expect = since(t0);
  return out;
}

}  // namespace lull::compiler::factored
