#include "runtime/sim/arrivals.h"

#include <cmath>
#include <stdexcept>

namespace lull::sim {

RateArrivals::RateArrivals(std::vector<RateSegment> segments, ArrivalProcess process, std::uint64_t seed)
    : segments_(std::move(segments)), process_(process), rng_(seed) {
  for (const auto& s : segments_)
    if (!(s.end_s >= s.start_s) || !(s.qps >= 0) || !std::isfinite(s.qps))
      throw std::invalid_argument("rate segment with negative length or rate");
  if (process_.gamma && !(process_.cv2 > 0)) throw std::invalid_argument("gamma arrivals need CV^2 > 0");
  if (!segments_.empty()) t_s_ = segments_.front().start_s;
}

double RateArrivals::draw_gap_s(double qps) {
  if (!process_.gamma) return std::exponential_distribution<double>(qps)(rng_);
  // Gamma with mean 1/qps and variance cv2/qps^2: shape 1/cv2, scale cv2/qps.
  return std::gamma_distribution<double>(1.0 / process_.cv2, process_.cv2 / qps)(rng_);
}

bool RateArrivals::next(std::int64_t* t_us) {
  while (seg_ < segments_.size()) {
    const RateSegment& s = segments_[seg_];
    if (t_s_ < s.start_s) t_s_ = s.start_s;
    if (s.qps > 0) {
      const double t = t_s_ + draw_gap_s(s.qps);
      if (t < s.end_s) {
        t_s_ = t;
        *t_us = static_cast<std::int64_t>(std::llround(t * 1e6));
        return true;
      }
    }
    // The gap crossed the segment's end: restart the renewal process at the
    // boundary with the next rate (exact for Poisson by memorylessness).
    t_s_ = s.end_s;
    ++seg_;
  }
  return false;
}

bool ReplayArrivals::next(std::int64_t* t_us) {
  if (i_ >= times_us_.size()) return false;
  *t_us = times_us_[i_++];
  return true;
}

}  // namespace lull::sim
