#pragma once
// `lull compile --arrivals tracked:FILE --expect-lag on`: the expectation on
// the trace with the load window's lag in it (docs/user-guide.md, "Traffic
// whose rate moves"). The runtime serves the policy of its trailing load
// estimate while the queries come at the rate around them: each arrival is
// a pair (estimate, rate), and the policy compiled for the estimate's grid
// load is evaluated at that rate (solver.h's evaluate_policy: the stationary
// distribution of the fixed policy under the rate's arrivals, no new solve).
// This also replaces the "violation 1" of loads beyond capacity by what the
// served policy does there (queries shed at the full queue count as missed).
// At a constant load the same evaluation takes the load estimate's noise:
// the policies the runtime's count-over-500-ms picks, each at the true load
// (served_expectations; `lull compile --expect-lag on` without a trace).
#include <cstdint>
#include <vector>

#include "compiler/arrival_fit.h"
#include "compiler/compile_library.h"
#include "compiler/compile_spec.h"
#include "compiler/mdp/mdp_problem.h"
#include "compiler/profile/model_table.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

// The rate around an arrival: the arrivals in a window of this length centred
// on it, shrunk toward the window kRateSmoothing times longer by the share of
// their difference's variance that the count's noise (count_dispersion x the
// count) does not explain: a stationary trace keeps the longer window's rate.
inline constexpr std::int64_t kRateWindowUs = 500'000;
inline constexpr int kRateSmoothing = 10;

struct ServedPair {
  double estimate_qps = 0;  // the trailing load window's reading (served_load_shares)
  double rate_qps = 0;      // the rate around the arrival, rounded to the nearest multiple of the step
  double share = 0;         // of arrivals
};
// Per arrival (in order), the trailing load window's reading and the rate
// around it (rounded as in served_load_pairs, share 1 / arrivals each),
// shrunk toward the rate over `smooth_window_us` (0: kRateSmoothing times
// the rate's window).
std::vector<ServedPair> served_load_series(const std::vector<std::int64_t>& times_us, double rate_step_qps,
                                           double count_dispersion = 1, std::int64_t window_us = kLoadWindowUs,
                                           std::int64_t rate_window_us = kRateWindowUs,
                                           std::int64_t smooth_window_us = 0);
// served_load_series with pairs of equal values merged; rate_step_qps > 0;
// count_dispersion: the short-range process's (1 for Poisson, CV^2 for
// gamma, D for batch).
std::vector<ServedPair> served_load_pairs(const std::vector<std::int64_t>& times_us, double rate_step_qps,
                                          double count_dispersion = 1, std::int64_t window_us = kLoadWindowUs,
                                          std::int64_t rate_window_us = kRateWindowUs);

// The choice vector (solver.h) of `policy` on `problem`: same states, and
// each state's (model, batch) found among its actions; throws
// std::invalid_argument when the policy was compiled for other states.
std::vector<int> choice_of(const MdpProblem& problem, const schema::Policy& policy);

// The expectation of section 6 with a policy's distribution over states,
// counting in a missing batch only the queries expected to be late (`late`)
// instead of all of them: the earliest one, and the i-th later one when its
// extra slack, i x K central gaps (a gamma of their mean and squared CV, the
// process's burstiness: Erlang(i K, rate) for Poisson), is shorter than the
// batch's latency minus T_j. The rest of the batch meets its deadline on
// the batch's model. Measured on the simulator's own decisions (K = 8, image,
// 340-400 QPS) it predicts the late queries of missing batches within 4%;
// section 6 counts about 5 times as many.
struct Figures {
  double accuracy = 0, violation = 0;
};
Figures late_expectation(const MdpProblem& problem, const std::vector<int>& choice,
                         const std::vector<double>& stationary);
// The queries late_expectation counts as late when state `s` takes action `a`.
double late_in_batch(const MdpProblem& problem, int s, int a);
// The same with the earliest query's slack spread evenly over its grid cell
// [T_j, T_j+1) (`points` midpoints) instead of at T_j: the runtime chooses on
// the cell, but a batch meets or misses on the slack itself. An action whose
// latency is under T_j+1 then misses only in part.
double late_in_batch_in_cell(const MdpProblem& problem, int s, int a, int points);

// served_mixture with the lag: each pair served by the grid policy at or above
// its estimate (the highest above the grid), evaluated at its rate. Pairs
// under `min_share` of arrivals are taken at the policy's compiled load
// (evaluated there too when `late`: the figures of late_expectation).
LoadExpectation lagged_mixture(const ReducedProfiles& profiles, const CompileSpec& spec, const LibrarySweep& sweep,
                               const std::vector<ServedPair>& pairs, double min_share = 1e-4, bool late = false);

// The load estimates the runtime reads at a constant `load_qps`: per arrival,
// the arrivals in the trailing window (itself included) per second. The count
// is 1 + Poisson(load x window) for count_dispersion 1; for D != 1 the count
// beyond the arrival itself has variance D x its mean (negative binomial above
// 1, a rounded normal below). Pairs (estimate, rate = load_qps, share),
// ascending by estimate; counts under `min_share` are dropped and the rest
// renormalised. Throws std::invalid_argument for a load or window <= 0.
std::vector<ServedPair> estimate_noise_pairs(double load_qps, double count_dispersion = 1,
                                             std::int64_t window_us = kLoadWindowUs, double min_share = 1e-7);

// Per compiled load of the sweep (in the sweep's report order), what the
// runtime is expected to deliver when that load is the true, constant one:
// lagged_mixture over estimate_noise_pairs at that load, with the spec's
// arrival process's dispersion. A one-load sweep returns its compiled figures.
std::vector<LoadExpectation> served_expectations(const ReducedProfiles& profiles, const CompileSpec& spec,
                                                 const LibrarySweep& sweep, std::int64_t window_us = kLoadWindowUs,
                                                 bool late = false);

// One true load of served_expectations (the sweep's own load or not): the
// policies the estimate at `load_qps` picks from the sweep, evaluated there.
LoadExpectation served_expectation_at(const ReducedProfiles& profiles, const CompileSpec& spec,
                                      const LibrarySweep& sweep, double load_qps,
                                      std::int64_t window_us = kLoadWindowUs, bool late = false);

// The loads a library needs for served_expectation_at(load_qps) to pick a
// policy compiled near every estimate: load_qps + i x step (step 1% of the
// load rounded, at least 1 QPS; load_qps itself on it) from the estimate's
// mean - 5 standard deviations to its mean + 5, loads <= 0 left out.
// Dispersion as estimate_noise_pairs'. Throws std::invalid_argument for a
// load, window or dispersion <= 0.
std::vector<double> served_load_grid(double load_qps, double count_dispersion = 1,
                                     std::int64_t window_us = kLoadWindowUs);

// The dispersion of `spec`'s arrival process that served_expectations uses
// (uniform arrivals: 0.01, a count all but fixed).
double served_dispersion(const CompileSpec& spec);

}  // namespace lull::compiler
