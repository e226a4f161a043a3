#include "schema/burstiness_estimator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "schema/arrival_classify.h"

namespace lull {
namespace {
// A longer gap is idleness, not burstiness; the clamp keeps window * gap^2 in 64 bits.
constexpr std::int64_t kMaxGapUs = 10'000'000;
// Variance a gap between two times rounded to whole microseconds carries
// (two independent errors uniform over 1 us).
constexpr double kRoundingVarianceUs2 = 1.0 / 6;
// Bins a thinned estimate waits for at least (one lull waits for all 400).
constexpr std::size_t kMinReadyBins = 100;
}  // namespace

BurstinessEstimator::BurstinessEstimator(int window, int bin_mean) : bin_mean_(bin_mean) {
  if (bin_mean < 5 || bin_mean > 1000)
    throw std::invalid_argument("burstiness bins must hold 5 to 1000 arrivals, got " + std::to_string(bin_mean));
  if (window < 4 * bin_mean || window > 50'000)
    throw std::invalid_argument("burstiness window must be " + std::to_string(4 * bin_mean) +
                                " to 50000 arrivals, got " + std::to_string(window));
  gaps_.assign(static_cast<std::size_t>(window), 0);
  bins_.assign(static_cast<std::size_t>(window / bin_mean), 0);
}

void BurstinessEstimator::reset_bins(std::int64_t start_us, std::int64_t width_us) {
  bin_start_us_ = start_us;
  bin_us_ = std::max<std::int64_t>(1, width_us);
  bin_next_ = bin_count_ = 0;
  bin_sum_ = bin_sum2_ = 0;
  in_bin_ = 0;
}

void BurstinessEstimator::close_bins(std::int64_t t_us) {
  const std::size_t n = bins_.size();
  std::int64_t closing = (t_us - bin_start_us_) / bin_us_;
  // Whole windows of empty bins leave only empty bins: skip to the last n.
  if (closing > static_cast<std::int64_t>(n) + 1) {
    bin_start_us_ += (closing - static_cast<std::int64_t>(n) - 1) * bin_us_;
    closing = static_cast<std::int64_t>(n) + 1;
  }
  for (; closing > 0; --closing) {
    std::int32_t& slot = bins_[bin_next_];
    if (bin_count_ == n) {
      bin_sum_ -= slot;
      bin_sum2_ -= static_cast<std::int64_t>(slot) * slot;
    } else {
      ++bin_count_;
    }
    slot = in_bin_;
    bin_sum_ += in_bin_;
    bin_sum2_ += static_cast<std::int64_t>(in_bin_) * in_bin_;
    bin_next_ = bin_next_ + 1 == n ? 0 : bin_next_ + 1;
    in_bin_ = 0;
    bin_start_us_ += bin_us_;
    ++bins_closed_;
  }
  // The rate moved by more than 2x: bins of the old width no longer hold ~bin_mean_.
  if (bin_count_ == n && gap_count_ > 0 && gap_sum_ > 0) {
    const std::int64_t lo = static_cast<std::int64_t>(n) * bin_mean_ / 2,
                       hi = static_cast<std::int64_t>(n) * bin_mean_ * 2;
    if (bin_sum_ < lo || bin_sum_ > hi) reset_bins(t_us, bin_mean_ * gap_sum_ / static_cast<std::int64_t>(gap_count_));
  }
}

void BurstinessEstimator::record(std::int64_t t_us) {
  if (last_us_ >= 0) {
    const std::int64_t g = std::clamp<std::int64_t>(t_us - last_us_, 0, kMaxGapUs);
    std::int64_t& slot = gaps_[gap_next_];
    if (gap_count_ == gaps_.size()) {
      gap_sum_ -= slot;
      gap_sum2_ -= slot * slot;
    } else {
      ++gap_count_;
    }
    slot = g;
    gap_sum_ += g;
    gap_sum2_ += g * g;
    gap_next_ = gap_next_ + 1 == gaps_.size() ? 0 : gap_next_ + 1;
  }
  last_us_ = std::max(last_us_, t_us);
  if (bin_us_ == 0) {
    // The first bins' width from the first 2 bin_mean_ gaps.
    if (static_cast<std::int64_t>(gap_count_) >= 2 * bin_mean_ && gap_sum_ > 0)
      reset_bins(t_us, bin_mean_ * gap_sum_ / static_cast<std::int64_t>(gap_count_));
    else
      return;
  }
  if (t_us >= bin_start_us_ + bin_us_) close_bins(t_us);
  ++in_bin_;
}

void BurstinessEstimator::set_thinning(int every) {
  if (every < 1) throw std::invalid_argument("burstiness thinning must be at least 1, got " + std::to_string(every));
  thinning_ = every;
}

BurstinessEstimate BurstinessEstimator::estimate() const {
  BurstinessEstimate e;
  e.bin_us = static_cast<double>(bin_us_);
  const double every = static_cast<double>(thinning_);
  if (gap_count_ >= 2 && gap_sum_ > 0) {
    const double n = static_cast<double>(gap_count_), mean = static_cast<double>(gap_sum_) / n;
    const double var = std::max(0.0, static_cast<double>(gap_sum2_) / n - mean * mean - kRoundingVarianceUs2);
    e.gap_cv2 = every * var / (mean * mean);
  }
  if (bin_count_ >= 2 && bin_sum_ > 0) {
    const double n = static_cast<double>(bin_count_), mean = static_cast<double>(bin_sum_) / n;
    // A thinned bin's count is the whole stream's / G, give or take where
    // the every-G-th pattern starts and ends in it: two phases uniform over
    // G, variance (G^2 - 1) / (6 G^2), taken off before scaling back.
    const double phase_var = (every * every - 1) / (6 * every * every);
    e.dispersion = every * ((static_cast<double>(bin_sum2_) / n - mean * mean - phase_var) / mean);
  }
  // Thinned: ready after 1/G of the window, the same stretch of the whole
  // stream as one lull's (a thinned stream is more regular, so its gaps say as
  // much each; the rings go on filling to the full window), and at least
  // kMinReadyBins bins (fewer leave the dispersion too noisy to name Poisson).
  const std::size_t thin = static_cast<std::size_t>(thinning_);
  e.ready = gap_count_ >= std::max<std::size_t>(2, gaps_.size() / thin) &&
            bin_count_ >= std::min(bins_.size(), std::max(kMinReadyBins, bins_.size() / thin));
  if (!e.ready) return e;
  // Standard errors under Poisson: CV^2 of n exponential gaps ~ sqrt(8 / n);
  // the index of dispersion of n Poisson counts ~ sqrt(2 / (n - 1)).
  const ArrivalStatistics s{e.gap_cv2, e.dispersion, std::sqrt(8.0 / static_cast<double>(gap_count_)),
                            std::sqrt(2.0 / static_cast<double>(bin_count_ - 1))};
  e.process = classify_arrivals(s).process;
  return e;
}

double BurstinessEstimator::rate_cv2() const {
  const std::size_t blocks = bin_count_ / kModulationBins;
  if (blocks < 2 || bin_sum_ <= 0) return 0;
  const std::size_t n = bins_.size(), oldest = bin_count_ == n ? bin_next_ : 0;
  double s1 = 0, s2 = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    double c = 0;
    for (std::size_t k = 0; k < kModulationBins; ++k) c += bins_[(oldest + b * kModulationBins + k) % n];
    s1 += c;
    s2 += c * c;
  }
  const double m = s1 / static_cast<double>(blocks), var = s2 / static_cast<double>(blocks) - m * m;
  const double bn = static_cast<double>(bin_count_), bm = static_cast<double>(bin_sum_) / bn;
  const double bin_dispersion = std::max(0.0, (static_cast<double>(bin_sum2_) / bn - bm * bm) / bm);
  return m > 0 ? std::max(0.0, (var - bin_dispersion * m) / (m * m)) : 0;
}

}  // namespace lull
