#include "runtime/sim/arrivals.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lull::sim {

namespace {

void check_process(const ArrivalProcess& p) {
  if (p.kind == ArrivalProcess::Kind::kGamma && !(p.cv2 > 0 && std::isfinite(p.cv2)))
    throw std::invalid_argument("gamma arrivals need a finite CV^2 > 0");
  if (p.kind == ArrivalProcess::Kind::kBatch && !(p.dispersion >= 1 && std::isfinite(p.dispersion)))
    throw std::invalid_argument("batch arrivals need a finite dispersion D >= 1");
}

}  // namespace

RateArrivals::RateArrivals(std::vector<RateSegment> segments, ArrivalProcess process, std::uint64_t seed)
    : RateArrivals(std::move(segments), std::vector<ArrivalStep>{ArrivalStep{0, process}}, seed) {}

RateArrivals::RateArrivals(std::vector<RateSegment> segments, const std::vector<ArrivalStep>& steps, std::uint64_t seed)
    : rng_(seed) {
  if (steps.empty()) throw std::invalid_argument("arrival schedule with no step");
  for (const auto& st : steps) check_process(st.process);
  for (const auto& s : segments)
    if (!(s.end_s >= s.start_s) || !(s.qps >= 0) || !std::isfinite(s.qps))
      throw std::invalid_argument("rate segment with negative length or rate");
  // Split each segment where a step starts inside it (one step: the
  // segments as given, so a single process draws exactly as before).
  for (const auto& s : segments)
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const double a = i == 0 ? -HUGE_VAL : steps[i].start_s;  // the first step holds from the start
      const double b = i + 1 < steps.size() ? steps[i + 1].start_s : HUGE_VAL;
      const double lo = std::max(s.start_s, a), hi = std::min(s.end_s, b);
      const bool empty_segment_here = s.end_s == s.start_s && a <= s.start_s && s.start_s < b;
      if (!(lo < hi) && !empty_segment_here) continue;
      segments_.push_back(RateSegment{lo, std::max(lo, hi), s.qps});
      processes_.push_back(steps[i].process);
    }
  process_ = processes_.empty() ? steps.front().process : processes_.front();
  if (!segments_.empty()) t_s_ = segments_.front().start_s;
}

double RateArrivals::draw_gap_s(double qps) {
  switch (process_.kind) {
    case ArrivalProcess::Kind::kUniform:
      return 1.0 / qps;
    case ArrivalProcess::Kind::kGamma:
      // Gamma with mean 1/qps and variance cv2/qps^2: shape 1/cv2, scale cv2/qps.
      if (process_.cv2 != 1) return std::gamma_distribution<double>(1.0 / process_.cv2, process_.cv2 / qps)(rng_);
      break;
    case ArrivalProcess::Kind::kBatch:
      // Bursts at rate qps / E[X], E[X] = (D - 1) / ln D for logarithmic sizes.
      if (process_.dispersion != 1)
        return std::exponential_distribution<double>(qps * std::log(process_.dispersion) /
                                                     (process_.dispersion - 1))(rng_);
      break;
    case ArrivalProcess::Kind::kPoisson:
      break;
  }
  return std::exponential_distribution<double>(qps)(rng_);
}

// Logarithmic burst size, P(X = k) = -beta^k / (k ln(1 - beta)), beta = 1 - 1/D,
// so that counts have index of dispersion E[X^2] / E[X] = D; by inversion.
int RateArrivals::draw_burst_size() {
  if (process_.kind != ArrivalProcess::Kind::kBatch || process_.dispersion == 1) return 1;
  const double beta = 1 - 1 / process_.dispersion;
  const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
  double p = beta / std::log(process_.dispersion), cdf = p;
  int k = 1;
  while (u > cdf && k < 1000000) {
    p *= beta * k / (k + 1);
    ++k;
    cdf += p;
  }
  return k;
}

// Whether a gap that crosses the end of segment i carries into segment i + 1
// (the renewal runs on, its clock scaled by the rate: the arrivals of a
// time-changed renewal, whose mean count over any segment is the segment's
// rate x length) rather than restarting at the boundary. A restarted gamma
// renewal with CV^2 c gains (c - 1) / 2 arrivals per segment in expectation
// (a start is not a typical point of the renewal): +1.5 arrivals a second
// for gamma:4 over 1 s segments. Exponential gaps (Poisson, batch) restart,
// exactly as before; so does a process that changes at the boundary.
bool RateArrivals::carries_past(std::size_t i) const {
  if (i + 1 >= segments_.size() || segments_[i + 1].start_s != segments_[i].end_s) return false;
  const ArrivalProcess &a = processes_[i], &b = processes_[i + 1];
  const bool memoryless = a.kind == ArrivalProcess::Kind::kPoisson || a.kind == ArrivalProcess::Kind::kBatch ||
                          (a.kind == ArrivalProcess::Kind::kGamma && a.cv2 == 1);
  return !memoryless && a.kind == b.kind && a.cv2 == b.cv2 && a.dispersion == b.dispersion;
}

bool RateArrivals::next(std::int64_t* t_us) {
  if (burst_left_ > 0) {  // the burst's siblings arrive with it
    --burst_left_;
    *t_us = static_cast<std::int64_t>(std::llround(t_s_ * 1e6));
    return true;
  }
  while (seg_ < segments_.size()) {
    const RateSegment& s = segments_[seg_];
    if (t_s_ < s.start_s) t_s_ = s.start_s;
    double t = HUGE_VAL;
    if (s.qps > 0) {
      if (carry_ >= 0) {  // what is left of a gap begun in an earlier segment, in mean gaps
        t = t_s_ + carry_ / s.qps;
        carry_ = -1;
      } else {
        // Evenly spaced arrivals start at the trace's start.
        const bool at_start = process_.kind == ArrivalProcess::Kind::kUniform && !started_;
        t = at_start ? t_s_ : t_s_ + draw_gap_s(s.qps);
      }
      started_ = true;
      if (t < s.end_s) {
        t_s_ = t;
        burst_left_ = draw_burst_size() - 1;
        *t_us = static_cast<std::int64_t>(std::llround(t * 1e6));
        return true;
      }
    }
    // The gap crossed the segment's end: carried into the next segment (a
    // renewal with memory, carries_past), else restarted at the boundary
    // with the next rate (exact for Poisson by memorylessness). A carried
    // gap passes through a segment of rate 0 unchanged.
    if (!carries_past(seg_))
      carry_ = -1;
    else if (s.qps > 0)
      carry_ = (t - s.end_s) * s.qps;
    t_s_ = s.end_s;
    if (++seg_ < segments_.size()) process_ = processes_[seg_];
  }
  return false;
}

bool ReplayArrivals::next(std::int64_t* t_us) {
  if (i_ >= times_us_.size()) return false;
  *t_us = times_us_[i_++];
  return true;
}

}  // namespace lull::sim
