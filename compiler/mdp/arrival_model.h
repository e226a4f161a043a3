#pragma once
// How the MDP models one worker's arrivals (docs/solver.md): the worker
// receives every K'-th event of a "counting stream" whose counts are Poisson
// (dispersion 1) or negative binomial (compound Poisson, dispersion D > 1).
//   poisson      K' = K, the central rate: mdp-spec section 4 as written.
//   batch:D      K' = K, the central rate, dispersion D: exact counts
//                (independent increments), the burst siblings in the phase
//                prior. When bursts can outlast a round of K workers
//                (P(R >= K) > 0), an idle worker serves a burst's query
//                before its own later siblings of that burst arrive: the
//                state (1, J) then gets phases z >= K at the start of its
//                service (same_instant_bursts). APPROXIMATE where that
//                matters (P(R >= K) >= 1e-3: small K, large D), because
//                (1, J) is also reached without an idle spell, where z < K.
//   gamma:c      K/c whole: K' = K/c, rate lambda/c, Poisson: exact (the
//                worker's gaps are Erlang(K/c, lambda/c)).
//                Otherwise an APPROXIMATION: K' = ceil(K/c), the per-worker
//                rate kept (lambda K'/K), dispersion D' = K' c / K, so that
//                the worker's long-run count dispersion c/K is matched.
#include <string>
#include <vector>

#include "schema/arrival_process.h"

namespace lull::compiler {

struct ArrivalModel {
  int phases = 1;          // K'
  double rate_per_us = 0;  // of the counting stream
  double dispersion = 1;   // of its counts; 1: Poisson
  // w[r] = P(a query's burst brings r more after it) = P(X > r) / E[X];
  // {1} without bursts. Enters the phase prior (mdp-spec 4.1).
  std::vector<double> burst_residual{1.0};
  // The stream's bursts reach an idle worker at once (batch:D; also the
  // gamma approximation's, an approximation there): the idle state's phase
  // then extends past K (compiler/solver/factored, Dims::E).
  bool same_instant_bursts = false;
  // With them: v[z] = P(an idle worker's query brings z later siblings of
  // its burst) = P(z < X <= z + K) / E[min(X, K)] (the worker's turn falls
  // on one of the burst's first K positions, uniformly); empty otherwise.
  // The idle state (1, J) has age 0, so this is its phase row, past K too.
  std::vector<double> idle_residual;
  bool exact = true;  // false: the approximation above
  // The phase cap applied (docs/user-guide.md, "Large fleets"): the phases
  // the process would have were cut to the cap, the stream's rate scaled
  // with them so the worker's own rate is kept. 0: not capped.
  int capped_from = 0;
  std::string description;  // one line for reports
};

// Throws std::invalid_argument for a process no MDP models (uniform) or a
// parameter out of range.
//
// phase_cap > 0 (the large-fleet model, docs/user-guide.md "Large fleets"):
// where the process has more phases K' than the cap, the worker gets every
// cap-th event of a stream at rate lambda cap / K' instead: the same rate
// per worker, gaps more variable (CV^2 1/cap instead of 1/K' for Poisson
// and Gamma, whose capped model is Poisson's; batch:D keeps its bursts).
// Below the cap, or with 0, the model is the one above, unchanged.
ArrivalModel arrival_model(const ArrivalProcess& process, int workers, double load_qps, int phase_cap = 0);

// w[r] for logarithmic burst sizes with dispersion D > 1, cut where the
// remaining mass is below 1e-17.
std::vector<double> burst_residual(double dispersion);

// v[z] above for K workers, cut as burst_residual is.
std::vector<double> idle_burst_residual(double dispersion, int workers);

}  // namespace lull::compiler
