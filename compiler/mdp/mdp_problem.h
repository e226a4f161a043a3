#pragma once
// One worker's MDP (mdp-spec sections 2-3): the states, each state's actions in
// the spec's order, rewards, and the distinct service times the actions use.
// Transitions are computed from these by the factored solver
// (compiler/solver/factored); no transition row is stored.
#include <string>
#include <vector>

#include "compiler/mdp/arrival_model.h"
#include "compiler/mdp/state_index.h"
#include "compiler/profile/model_table.h"

namespace lull::compiler {

enum class Discretization { kFld, kMd };
enum class Batching { kMaximal, kVariable };

struct MdpOptions {
  double slo_us = 150000;
  int workers = 1;        // K
  double load_qps = 100;  // central arrival rate
  int max_queue = 32;     // N
  Discretization discretization = Discretization::kFld;
  int intervals = 100;  // D (FLD)
  Batching batching = Batching::kMaximal;
  ArrivalProcess arrivals{};  // the central process (default Poisson: mdp-spec section 4)
  // 0: exact (mdp-spec). K* > 0: more phases than K* are modelled with K*
  // at the same rate per worker (arrival_model; docs/user-guide.md "Large fleets").
  int phase_cap = 0;
  // The age of a state's earliest query when its phase is drawn (mdp-spec
  // 4.1): S - T_j, its oldest in the cell (false: the spec), or at the
  // cell's middle (the followed queue of compiler/transient_expectation.h:
  // the oldest age expects the next arrivals too soon).
  bool age_mid_cell = false;
  // The value-iteration horizon is a solver setting: SolveOptions::horizon.
};

struct Action {
  int model = 0;
  int batch = 0;
  int tau = 0;        // index into MdpProblem::taus_us
  double reward = 0;  // acc(model) when the SLO is met, else 0
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
  std::vector<double> grid_us;    // T_0..T_J (T_J = S)
  std::vector<double> accuracy;   // per model
  std::vector<double> taus_us;    // distinct service times, ascending
  std::vector<int> action_begin;  // actions of state s: [action_begin[s], action_begin[s+1])
  std::vector<Action> actions;
  // The worker's arrivals as the transitions see them (arrival_model.h):
  // every K()-th event of a stream at rate lambda_per_us. For Poisson these
  // are the workers and the central rate.
  ArrivalModel arrivals;
  double lambda_per_us = 0;

  int K() const { return arrivals.phases; }
  int N() const { return options.max_queue; }
  int J1() const { return static_cast<int>(grid_us.size()); }  // J + 1
  StateIndex states() const { return StateIndex{N(), J1()}; }
  int num_states() const { return states().num_states(); }
  int state(int n, int j) const { return states().state(n, j); }
  int full_state() const { return states().full(); }
  int n_of(int s) const { return states().n_of(s); }
  int j_of(int s) const { return states().j_of(s); }
  int num_actions(int s) const { return action_begin[s + 1] - action_begin[s]; }
  // Queries an action serves (the weight of section 6).
  int served(int a) const { return actions[a].batch; }
};

// Builds states and actions; throws std::invalid_argument for impossible options.
MdpProblem build_mdp_problem(const ReducedProfiles& profiles, const MdpOptions& options);

}  // namespace lull::compiler
