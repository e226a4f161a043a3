#pragma once
// `lull compile --arrivals fit:FILE`: the family and parameter of an arrival
// process from recorded arrival times (docs/arrivals.md, "Choosing a process
// from a trace"). Two statistics:
//   gap CV^2   of the inter-arrival gaps: c for gamma:c; 2 E[X] - 1 for
//              batch:D (E[X] = (D - 1) / ln D, the mean burst size)
//   dispersion Var/mean of the counts in windows of ~kFitWindowMean arrivals:
//              about c for gamma:c (a renewal process's long-run index), D for batch:D
// Poisson when both are within their noise of 1; otherwise the family whose
// predicted gap CV^2 (given the dispersion) is nearer the measured one, with
// its parameter from the statistic it is best measured by (gap CV^2 for gamma,
// dispersion for batch).
#include <cstdint>
#include <string>
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

// times_us non-decreasing; throws std::invalid_argument (without a file name:
// the caller adds it) for too few arrivals, times going backwards, or a
// zero-length trace.
ArrivalFit fit_arrival_process(const std::vector<std::int64_t>& times_us);

}  // namespace lull::compiler
