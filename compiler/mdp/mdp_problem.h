#pragma once
// One worker's MDP (mdp-spec sections 2-3): the states, each state's actions in
// the spec's order, rewards, and the distinct service times the actions use.
// Transition probabilities live in TransitionTables (transition_tables.h).
#include <string>
#include <vector>

#include "compiler/profile/model_table.h"

namespace lull::compiler {

enum class Discretization { kFld, kMd };
enum class Batching { kMaximal, kVariable };

struct MdpOptions {
  double slo_us = 150000;
  int workers = 1;           // K
  double load_qps = 100;     // central Poisson rate
  int max_queue = 32;        // N
  Discretization discretization = Discretization::kFld;
  int intervals = 100;       // D (FLD)
  Batching batching = Batching::kMaximal;
  // The value-iteration horizon is a solver setting: SolveOptions::horizon.
};

struct Action {
  int model = 0;
  int batch = 0;
  int tau = 0;               // index into MdpProblem::taus_us
  double reward = 0;         // acc(model) when the SLO is met, else 0
  bool meets_slo = false;
  // Variable batching only, batch < n: the queue left behind keeps n - batch
  // queries; their earliest slack is approximated by T_j - lat (see
  // docs/architecture.md, "Variable batching"). -1 for whole-queue actions.
  int next_j = -1;
  bool partial() const { return next_j >= 0; }
};

class MdpProblem {
 public:
  MdpOptions options;
  std::vector<double> grid_us;     // T_0..T_J (T_J = S)
  std::vector<double> accuracy;    // per model
  std::vector<double> taus_us;     // distinct service times, ascending
  std::vector<int> action_begin;   // actions of state s: [action_begin[s], action_begin[s+1])
  std::vector<Action> actions;
  double lambda_per_us = 0;

  int K() const { return options.workers; }
  int N() const { return options.max_queue; }
  int J1() const { return static_cast<int>(grid_us.size()); }   // J + 1
  int num_states() const { return (N() + 1) * J1() + 1; }
  int state(int n, int j) const { return n * J1() + j; }
  int full_state() const { return (N() + 1) * J1(); }
  int n_of(int s) const { return s == full_state() ? N() + 1 : s / J1(); }
  int j_of(int s) const { return s == full_state() ? 0 : s % J1(); }
  int num_actions(int s) const { return action_begin[s + 1] - action_begin[s]; }
  // Queries an action serves (the weight of section 6).
  int served(int a) const { return actions[a].batch; }
};

// Builds states and actions; throws std::invalid_argument for impossible options.
MdpProblem build_mdp_problem(const ReducedProfiles& profiles, const MdpOptions& options);

}  // namespace lull::compiler
