#pragma once
// `lull compile --arrivals fit:FILE`: the family and parameter of an arrival
// process from recorded arrival times (docs/solver.md, "Choosing a process
// from a trace"): the gap CV^2 and the dispersion of counts in windows of
// ~kFitWindowMean arrivals, classified by schema/arrival_classify.h's rule,
// the parameter rounded to two digits (a policy per pattern, not per trace).
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
