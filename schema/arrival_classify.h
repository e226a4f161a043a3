#pragma once
// Which arrival process a pair of measured statistics points to: the one
// rule behind `lull compile --arrivals fit:FILE` (compiler/arrival_fit.*) and
// the runtime's online estimate (runtime/core/burstiness_estimator.*).
//   gap CV^2    c for gamma:c; 2 E[X] - 1 for batch:D, E[X] = (D - 1) / ln D
//               (a burst's first gap is exponential, its siblings' are zero)
//   dispersion  Var/mean of counts in windows of many arrivals: about c for
//               gamma:c (a renewal process's long-run index), D for batch:D
// Poisson when both are within 3 standard errors of 1; otherwise the family
// whose predicted gap CV^2 (given the dispersion) is nearer in log ratio,
// with its parameter from the statistic it is best measured by (gap CV^2 for
// gamma, dispersion for batch).
#include "schema/arrival_process.h"

namespace lull {

// Gap CV^2 of batch:D (logarithmic burst sizes).
double batch_gap_cv2(double dispersion);

struct ArrivalStatistics {
  double gap_cv2 = 1;
  double dispersion = 1;
  double gap_noise = 0;         // one standard error of gap_cv2 under Poisson
  double dispersion_noise = 0;  // one standard error of dispersion under Poisson
};

struct ArrivalClass {
  ArrivalProcess process;  // parameter unrounded (gamma CV^2 >= 0.01, batch D >= 1)
  bool poisson_within_noise = false;
  bool batch_nearer = false;
};

ArrivalClass classify_arrivals(const ArrivalStatistics& s);

}  // namespace lull
