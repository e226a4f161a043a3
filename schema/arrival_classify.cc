#include "schema/arrival_classify.h"

#include <algorithm>
#include <cmath>

namespace lull {

double batch_gap_cv2(double D) { return D <= 1 ? 1 : 2 * (D - 1) / std::log(D) - 1; }

ArrivalClass classify_arrivals(const ArrivalStatistics& s) {
  ArrivalClass c;
  if (std::fabs(s.dispersion - 1) <= 3 * s.dispersion_noise && std::fabs(s.gap_cv2 - 1) <= 3 * s.gap_noise) {
    c.poisson_within_noise = true;
    return c;
  }
  const double D = std::max(1.0, s.dispersion);
  const double gap_cv2 = std::max(1e-9, s.gap_cv2);
  const double gamma_miss = std::fabs(std::log(gap_cv2 / D));
  const double batch_miss = std::fabs(std::log(gap_cv2 / batch_gap_cv2(D)));
  c.batch_nearer = s.dispersion > 1 && batch_miss < gamma_miss;
  c.process = c.batch_nearer ? ArrivalProcess::batch(D) : ArrivalProcess::gamma(std::max(0.01, s.gap_cv2));
  return c;
}

}  // namespace lull
