#pragma once
// Burstiness of arrivals over a sliding window (docs/solver.md, "The runtime
// sees the pattern"): the runtime's online estimate (runtime/core/load_monitor.h)
// and `lull compile --arrivals fit:FILE --fit-scale runtime` (compiler/arrival_fit.h)
// run this one code: over the last `window` arrivals, the CV^2 of the gaps
// and the index of dispersion (Var/mean) of the counts in time bins holding
// `bin_mean` arrivals on average, classified gamma vs batch by
// schema/arrival_classify.h. O(1) per arrival (running integer sums over two
// rings), no allocation after construction; the classification runs only
// when estimate() is called.
//
// The bin width follows the rate: set to bin_mean mean gaps, and set again
// (the bins cleared) when the bins' mean count leaves [bin_mean/2, 2 bin_mean].
//
// Times are whole microseconds, so each gap carries the difference of two
// rounding errors (variance 1/6 us^2): removed from the gaps' variance, or
// Poisson traffic at 1,000,000 QPS (1 us gaps) would read as gamma:1.17.
//
// A shard of G behind a per-request round-robin balancer records every G-th
// arrival of the stream its policies were compiled for (runtime/core/shard.h).
// That stream looks G times more regular: a renewal process's every G-th
// arrival has gap CV^2 c/G, and counts over many arrivals a dispersion D/G.
// With set_thinning(G) the estimate is the whole stream's (both statistics
// times G), so the shard serves the pattern one lull of the fleet would, and
// it is ready after 1/G of the window: the stretch of the stream one lull
// waits for.
#include <cstdint>
#include <vector>

#include "schema/arrival_process.h"

namespace lull {

struct BurstinessEstimate {
  bool ready = false;  // a full window of gaps and of bins seen since the start or a rate change (thinned: 1/G)
  double gap_cv2 = 1;
  double dispersion = 1;   // of counts in bins of ~bin_mean arrivals
  double bin_us = 0;       // the bins' width
  ArrivalProcess process;  // classified; poisson until ready
};

class BurstinessEstimator {
 public:
  // The defaults: docs/solver.md measures the estimates' noise against
  // window and bin size with the simulator's sampler (lull_burstiness_noise).
  // Bins of 20 arrivals hold the bias of a renewal process's finite-bin
  // dispersion to (1 - c^2) / (12 * 20 c): -3% at c = 8; 8000 arrivals
  // (400 bins) keep gamma:4's 5-95% within the pattern tolerance (+-25%).
  static constexpr int kBinMean = 20;
  static constexpr int kDefaultWindow = 8000;
  static constexpr int kModulationBins = 10;
  explicit BurstinessEstimator(int window_arrivals = kDefaultWindow, int bin_mean = kBinMean);

  void record(std::int64_t t_us);  // arrival times non-decreasing (an earlier one counts as a zero gap)
  BurstinessEstimate estimate() const;
  // The modulation beside the burstiness: the squared coefficient of
  // variation of the rate across the window, in blocks of kModulationBins
  // consecutive bins, net of what the bins' own dispersion explains
  // ((Var(block count) - dispersion x mean) / mean^2, at least 0): about 0
  // for stationary traffic, the rate's variance over its mean squared where
  // it moves within the window. O(window / bin_mean): for a scrape, not per
  // arrival. 0 before two blocks are closed.
  double rate_cv2() const;
  // The arrivals recorded are every `every`-th of the stream to estimate (1:
  // all of it). Throws std::invalid_argument below 1.
  void set_thinning(int every);
  int thinning() const { return thinning_; }
  // Bins closed so far: the estimate can only have changed when it moved
  // (the gap statistic moves every arrival, but slowly).
  std::uint64_t bins_closed() const { return bins_closed_; }
  int window() const { return static_cast<int>(gaps_.size()); }
  int bin_mean() const { return bin_mean_; }

 private:
  void close_bins(std::int64_t t_us);
  void reset_bins(std::int64_t start_us, std::int64_t width_us);

  // Gaps: a ring of the last `window` (clamped to kMaxGapUs so squares fit).
  std::vector<std::int64_t> gaps_;
  std::size_t gap_next_ = 0, gap_count_ = 0;
  std::int64_t gap_sum_ = 0, gap_sum2_ = 0;
  std::int64_t last_us_ = -1;
  // Bins: a ring of the last window / kBinMean closed bins' counts.
  std::vector<std::int32_t> bins_;
  std::size_t bin_next_ = 0, bin_count_ = 0;
  std::int64_t bin_sum_ = 0, bin_sum2_ = 0;
  std::int64_t bin_start_us_ = 0, bin_us_ = 0;  // bin_us_ == 0: not started
  std::int32_t in_bin_ = 0;
  std::int64_t bin_mean_;
  std::uint64_t bins_closed_ = 0;
  int thinning_ = 1;
};

}  // namespace lull
