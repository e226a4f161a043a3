#pragma once
// Step 1 of the factored solver's pipeline, generic over the executor (CPU
// or CUDA): hand the problem's grid, service times and actions to the
// executor, and build the factored transition structure (docs/architecture.md,
// "factored transitions") with the element functions of table_elements.h and
// count_elements.h.
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/solver/factored/count_elements.h"
#include "compiler/solver/factored/pass_lanes.h"
#include "compiler/solver/factored/pipeline_layout.h"
#include "compiler/solver/factored/table_elements.h"
#include "compiler/solver/factored/value_elements.h"
#include "compiler/solver/solver.h"

namespace lull::compiler::factored {

// Executors that build the pass tables with PassLanes (the CPU's) say so
// with a member kPassLanes.
template <class Exec, class = void>
struct HasPassLanes : std::false_type {};
template <class Exec>
struct HasPassLanes<Exec, std::void_t<decltype(Exec::kPassLanes)>> : std::bool_constant<Exec::kPassLanes> {};

template <class Exec, class T>
using BufferOf = typename Exec::template Buffer<T>;

// Everything the solve steps read, resident on the executor's side.
template <class Exec>
struct ExecTables {
  Dims d;
  // Host copy of the layout for the policy lists (layout_policy): its
  // tau, batch, next_j and count_begin stay; the other arrays are handed to
  // the executor and left empty here.
  ActionLayout layout;
  BufferOf<Exec, double> grid, phase, pass, kernel, count_prob, accuracy;
  // Same-instant bursts: the idle state's row over phases 0..K+E-1 (empty
  // without them), and per tau its phases K..K+E-1 mixed (IdleExtraRows, [k][col]).
  BufferOf<Exec, double> idle_phase, idle_rows;
  BufferOf<Exec, int> tau_bucket;
  BufferOf<Exec, int> a_begin, a_batch, a_tau, a_next_j, a_model;
  BufferOf<Exec, double> a_reward;
  BufferOf<Exec, char> a_meets;
  BufferOf<Exec, std::size_t> a_count_begin;

  // Shared buckets come first in pass/kernel, then one table per tau.
  const double* tau_pass() const { return pass.data() + static_cast<std::size_t>(d.B) * d.pass_size(); }
  const double* tau_kernel() const { return kernel.data() + static_cast<std::size_t>(d.B) * d.K; }
  ActionArrays actions() const {
    return {a_begin.data(), a_batch.data(), a_tau.data(), a_next_j.data(), a_reward.data(), a_count_begin.data()};
  }
};

template <class Exec>
ExecTables<Exec> build_exec_tables(const MdpProblem& p, Exec& ex, const SolveOptions& opt = {}) {
  // Between the steps below: a cancelled solve stops here (SolveOptions::cancel).
  const auto checkpoint = [&opt] { throw_if_cancelled(opt); };
  ExecTables<Exec> t;
  const Dims d = dims_of(p);
  t.d = d;
  t.layout = layout_actions(p);
  ActionLayout& L = t.layout;
  check_table_memory(d, L);  // refuse with the estimate rather than fail an allocation part-way
  t.grid = ex.upload(p.grid_us);
  t.accuracy = ex.upload(p.accuracy);
  t.a_begin = ex.upload(std::move(L.begin));
  t.a_batch = ex.upload(L.batch);
  t.a_tau = ex.upload(L.tau);
  t.a_next_j = ex.upload(L.next_j);
  t.a_model = ex.upload(std::move(L.model));
  t.a_reward = ex.upload(std::move(L.reward));
  t.a_meets = ex.upload(std::move(L.meets));
  t.a_count_begin = ex.upload(L.count_begin);
  auto taus = ex.upload(p.taus_us);
  auto tau_whole = ex.upload(L.tau_whole);

  // Pass and kernel tables: B shared buckets, then the taus' first buckets.
  const int tables = d.B + d.taus;
  const std::size_t span = static_cast<std::size_t>(d.span);
  auto width = ex.template zeros<double>(tables);
  auto remaining = ex.template zeros<double>(tables);
  auto active = ex.template zeros<char>(tables);
  t.tau_bucket = ex.template zeros<int>(d.taus);
  // Poisson counts read log(k!) from a table (one lgamma per count, not per entry).
  auto log_factorial = ex.template zeros<double>(d.dispersion == 1.0 ? span : 0);
  if (d.dispersion == 1.0) ex.for_each(span, LogFactorial{log_factorial.data()});
  const double* lf = d.dispersion == 1.0 ? log_factorial.data() : nullptr;
  ex.for_each(tables, TableParams{d, t.grid.data(), taus.data(), tau_whole.data(), width.data(), remaining.data(),
                                  active.data(), t.tau_bucket.data()});
  {
    // Padding before the first row and after the last: PassLanes reads up
    // to kPad - 1 entries beyond a row's either end.
#if LULL_PASS_LANES
    constexpr std::size_t pad = PassLanes::kPad;
#else
    constexpr std::size_t pad = 0;
#endif
    auto px_padded = ex.template zeros<double>(tables * span + 2 * pad);
    double* px = px_padded.data() + pad;
    auto cdf = ex.template zeros<double>(tables * span);
    auto sf = ex.template zeros<double>(tables * span);
    auto xend = ex.template zeros<int>(tables);
    auto ylen = ex.template zeros<int>(tables);
    ex.for_each(tables, TablePmfs{d, width.data(), remaining.data(), active.data(), px, cdf.data(), sf.data(),
                                  xend.data(), ylen.data(), lf});
    checkpoint();
    t.pass = ex.template zeros<double>(tables * d.pass_size());
#if LULL_PASS_LANES
    if constexpr (HasPassLanes<Exec>::value) {  // the same values, sixteen elements at a time
      const PassLanes lanes{d, px, cdf.data(), sf.data(), xend.data(), ylen.data(), t.pass.data()};
      ex.for_each(lanes.count(tables), lanes);
    } else
#endif
      ex.for_each(tables * d.pass_size(),
                  PassElement{d, px, cdf.data(), sf.data(), xend.data(), ylen.data(), t.pass.data()});
  }
  checkpoint();
  t.kernel = ex.template zeros<double>(static_cast<std::size_t>(tables) * d.K);
  ex.for_each(static_cast<std::size_t>(tables) * d.K, KernelElement{d, width.data(), active.data(), t.kernel.data()});

  checkpoint();
  t.phase = ex.template zeros<double>(static_cast<std::size_t>(d.num_states()) * d.K);
  auto burst_residual = ex.upload(p.arrivals.burst_residual);
  ex.for_each(d.num_states(), PhaseRow{d, t.grid.data(), burst_residual.data(), lf, t.phase.data()});
  t.idle_phase = ex.upload(idle_phase_row(p, d));
  if (t.idle_phase.size() > 0) ex.for_each(d.K, SetIdlePhase{d, t.idle_phase.data(), t.phase.data()});
  t.idle_rows = ex.template zeros<double>(d.E > 0 ? static_cast<std::size_t>(d.taus) * d.cols() : 0);
  if (d.E > 0) {
    auto cdf = ex.template zeros<double>(static_cast<std::size_t>(d.taus) * d.span);
    ex.for_each(d.taus,
                IdleExtraRows{d, taus.data(), tau_whole.data(), t.idle_phase.data(), cdf.data(), t.idle_rows.data()});
  }

  checkpoint();
  // Variable batching: count tables per slot, then each partial action's mixture.
  t.count_prob = ex.template zeros<double>(L.count_begin.back());
  if (L.any_partial()) {
    const std::size_t slots = L.slot_tau.size(), width_k = static_cast<std::size_t>(d.N) + 2;
    auto slot_tau = ex.upload(L.slot_tau);
    auto tau_slot = ex.upload(L.tau_slot);
    auto cpx = ex.template zeros<double>(slots * L.count_stride);
    ex.for_each(slots * L.count_stride, CountPmf{d, taus.data(), slot_tau.data(), L.count_stride, cpx.data()});
    auto table = ex.template zeros<double>(slots * d.K * width_k);
    ex.for_each(slots * d.K * width_k,
                CountTableElement{d, taus.data(), slot_tau.data(), L.count_stride, cpx.data(), table.data()});
    const std::size_t actions = L.state.size();
    auto a_state = ex.upload(std::move(L.state));
    ex.for_each(actions,
                CountProbs{d, a_state.data(), t.a_batch.data(), t.a_tau.data(), t.a_next_j.data(),
                           t.a_count_begin.data(), tau_slot.data(), table.data(), t.phase.data(), t.count_prob.data()});
  }
  return t;
}

}  // namespace lull::compiler::factored
