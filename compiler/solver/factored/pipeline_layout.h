#pragma once
// Host-side index structures that the factored solver's element functions
// read: the problem's sizes (Dims), its actions as flat arrays, the slots of
// the variable-batching count tables, and (once the policy is known) the
// lists that turn the power iteration's scatters into gathers (one writer
// per output element, so any executor may run the elements in parallel).
#include <cstddef>
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/solver/factored/element_math.h"

namespace lull::compiler::factored {

Dims dims_of(const MdpProblem& p);

// The idle state (1, J) under same-instant bursts: its age is
// 0 (T_J = S), so its phase is the number of later siblings of its query's
// burst, ArrivalModel::idle_residual, over z = 0..K+E-1; when the last
// phase is the overflow (N+1)K it collects the residual's tail. Empty
// without same-instant bursts. Computed on the host once, so every executor reads the same row.
std::vector<double> idle_phase_row(const MdpProblem& p, const Dims& d);

struct ActionLayout {
  std::vector<int> begin;  // [s], S + 1 entries (MdpProblem::action_begin)
  std::vector<int> state, batch, tau, next_j, model;
  std::vector<double> reward;
  std::vector<char> meets;
  std::vector<std::size_t> count_begin;  // [a], one more entry; as TransitionTables::count_begin
  std::vector<char> tau_whole;           // [tau]: some whole-queue action uses it
  std::vector<int> slot_tau;             // [slot]: taus that partial actions use
  std::vector<int> tau_slot;             // [tau]: its slot, -1 when none
  int count_stride = 0;                  // px entries per slot
  bool any_partial() const { return !slot_tau.empty(); }
};

ActionLayout layout_actions(const MdpProblem& p);

// Lists for one power-iteration step under the policy `choice`.
struct PolicyLayout {
  std::vector<int> states_begin, states;     // per tau: states choosing a whole-queue action with it
  std::vector<int> group_begin, group_taus;  // per first bucket j = 0..J: the taus in use starting there
  std::vector<int> in_begin, in_src;         // per target state: partial-action and idle moves into it
  std::vector<long long> in_prob;            // index into count_prob, -1 for probability 1
};

PolicyLayout layout_policy(const MdpProblem& p, const ActionLayout& actions, const std::vector<int>& tau_bucket,
                           const std::vector<int>& choice);

// Bytes of the transition structure: phase rows, pass and kernel tables
// (shared buckets and one first bucket per service time), count tables.
std::size_t factored_table_bytes(const MdpProblem& p, const ActionLayout& actions);

// The peak bytes build_exec_tables allocates for the tables (the pass-table
// scratch rows included), computed in double so that no size overflows.
double estimated_table_bytes(const Dims& d, const ActionLayout& actions);
// Throws std::runtime_error with the estimate when it exceeds `limit_bytes`
// (default: this machine's physical memory), before anything is allocated:
// a latency far beyond the SLO makes the rows millions of arrivals long.
void check_table_memory(const Dims& d, const ActionLayout& actions, double limit_bytes = 0);

// Multiply-adds of one value-iteration step: the bucket and tau tables, the Q
// values of whole-queue actions (K each) and of partial actions (their count
// distributions). The CPU executor threads its loops by this.
double work_per_step(const Dims& d, const ActionLayout& actions);

}  // namespace lull::compiler::factored
