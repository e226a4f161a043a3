#pragma once
// `lull compile --arrivals fit:FILE`: the family and parameter of an arrival
// process from recorded arrival times (docs/solver.md, "Choosing a process
// from a trace"): the gap CV^2 and the dispersion of counts in windows of
// ~kFitWindowMean arrivals, classified by schema/arrival_classify.h's rule,
// the parameter rounded to two digits (a policy per pattern, not per trace).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schema/arrival_process.h"

namespace lull::compiler {

// Fewer arrivals than this leave the dispersion too noisy to choose a family.
inline constexpr int kMinFitArrivals = 2000;
inline constexpr double kFitWindowMean = 50;

struct ArrivalFit {
  ArrivalProcess process;
  int arrivals = 0;
  double gap_cv2 = 0;
  double dispersion = 0;
  double dispersion_noise = 0;  // one standard error of `dispersion` under Poisson
  std::string reason;           // one line: what was chosen and why
};

// The time scales the statistics are read at (`--fit-scale`):
//   trace    gap CV^2 over the whole trace, dispersion of counts in windows
//            of kFitWindowMean arrivals over the whole trace (the default)
//   runtime  the runtime's online estimate (schema/burstiness_estimator.h:
//            the last 8000 arrivals, bins of 20) replayed over the trace, read
//            after each whole window, the medians classified with one
//            window's standard errors: the pattern the runtime would switch
//            to on this traffic. A rate that moves over longer than the
//            window (a sinusoid over 60 s) is left to the load tracking
//            instead of being read as bursts.
enum class FitScale { kTrace, kRuntime };
// "trace" | "runtime"; throws std::invalid_argument naming the text.
FitScale parse_fit_scale(const std::string& text);

// times_us non-decreasing; throws std::invalid_argument (without a file name:
// the caller adds it) for too few arrivals, times going backwards, or a
// zero-length trace.
ArrivalFit fit_arrival_process(const std::vector<std::int64_t>& times_us, FitScale scale = FitScale::kTrace);

// The runtime's load window (runtime::LoadMonitor's default, mdp-spec 7).
inline constexpr std::int64_t kLoadWindowUs = 500'000;

// `--arrivals tracked:FILE`: the trace split at the load window's time scale
// (docs/user-guide.md, "Traffic whose rate moves"). The index of dispersion of
// counts grows with the window when the rate moves and stays flat (or falls)
// for a stationary process; when it grows, the rate swings are left to the
// runtime's load tracking (a policy library over loads) and the short-range
// pattern is fitted on the rate-normalised arrivals (time rescaling by the
// rate smoothed over max(load window, kTrackedSmoothArrivals arrivals)).
// Otherwise short_range is `whole`, today's fit:FILE answer.
inline constexpr double kTrackedSmoothArrivals = 400;
// More arrivals than this share a timestamp with the one before: bursts.
inline constexpr double kBurstSharedShare = 0.05;
// Counts this much more dispersed than the bursts the gaps allow: the rate moves.
inline constexpr double kRateDispersionExcess = 2.5;
struct TrackedFit {
  ArrivalFit whole;        // fit:FILE's answer on the trace as recorded
  ArrivalFit short_range;  // the pattern compiled into each load's MDP
  bool modulated = false;
  double mean_qps = 0;
  double idc_short = 0, idc_1s = 0, idc_10s = 0;  // dispersion at 50 arrivals, 1 s, 10 s (0: trace too short)
  std::string reason;                             // one line: what was chosen and why
  std::string warning;                            // empty, or where neither part fits well
};
TrackedFit fit_tracked_arrivals(const std::vector<std::int64_t>& times_us);

// The load estimates the runtime reads over the trace with its rates times
// `scale` (times divided by it): for each arrival, the arrivals in the
// window before it per second; returned as (estimate QPS, share of arrivals),
// ascending by estimate.
std::vector<std::pair<double, double>> served_load_shares(const std::vector<std::int64_t>& times_us, double scale = 1,
                                                          std::int64_t window_us = kLoadWindowUs);

struct LoadExpectation {
  double load_qps = 0;
  double accuracy = 0;   // per satisfied query
  double violation = 0;  // fraction of queries
};
// What the runtime is expected to deliver on the trace: each share served by
// the policy of the lowest grid load at or above its estimate (the highest
// above the grid, runtime/core/policy_catalog.h), with that policy's compiled
// expectation; violation weighted by queries, accuracy by satisfied queries.
// `grid` ascending by load; its load_qps in the answer is the mean estimate.
LoadExpectation served_mixture(const std::vector<std::pair<double, double>>& shares,
                               const std::vector<LoadExpectation>& grid);

}  // namespace lull::compiler
