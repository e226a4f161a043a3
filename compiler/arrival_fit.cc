#include "compiler/arrival_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include "schema/arrival_classify.h"
#include "schema/burstiness_estimator.h"
#include "schema/count_rule.h"

namespace lull::compiler {
namespace {

// Rounded to 2 significant digits: a policy per pattern, not per trace. Via
// text: the double nearest the two-digit decimal.
double round2(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", v);
  return std::strtod(text, nullptr);
}

// The batch dispersion D whose gap CV^2 (schema/arrival_classify.h) is
// `gap_cv2` (1 at or below Poisson's).
double batch_dispersion_for_gap_cv2(double gap_cv2) {
  double lo = 1, hi = 1000;  // batch_gap_cv2 rises with D
  if (!(gap_cv2 > batch_gap_cv2(lo))) return 1;
  for (int i = 0; i < 60; ++i) (batch_gap_cv2(std::sqrt(lo * hi)) < gap_cv2 ? lo : hi) = std::sqrt(lo * hi);
  return hi;
}

// The runtime's estimator over the trace (FitScale::kRuntime): its estimate
// after each whole window of arrivals, when ready; the medians of the reads
// (what it reads most of the time; a mean is pulled up by the windows that
// straddle a change of rate).
ArrivalFit fit_at_runtime_scale(const std::vector<std::int64_t>& t) {
  ArrivalFit f;
  f.arrivals = static_cast<int>(t.size());
  const int window = std::min<int>(BurstinessEstimator::kDefaultWindow, f.arrivals / 2);
  BurstinessEstimator est(window, BurstinessEstimator::kBinMean);
  std::vector<double> cv2, disp, modulation;
  for (std::size_t i = 0; i < t.size(); ++i) {
    est.record(t[i]);
    if ((i + 1) % static_cast<std::size_t>(window) != 0 && i + 1 != t.size()) continue;
    const BurstinessEstimate e = est.estimate();
    if (!e.ready) continue;
    cv2.push_back(e.gap_cv2);
    disp.push_back(e.dispersion);
    modulation.push_back(est.rate_cv2());
  }
  const int reads = static_cast<int>(cv2.size());
  if (reads == 0)
    throw std::invalid_argument(
        "--fit-scale runtime: the runtime's estimate was never ready over the trace (its rate moves by 2x within a "
        "window of " +
        std::to_string(window) + " arrivals)");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
  };
  f.gap_cv2 = median(cv2);
  f.dispersion = median(disp);
  // One window's standard errors, as the runtime classifies: the same answer, not a finer one.
  const int bins = window / BurstinessEstimator::kBinMean;
  f.dispersion_noise = std::sqrt(2.0 / (bins - 1));
  const ArrivalClass c = classify_arrivals(
      ArrivalStatistics{f.gap_cv2, f.dispersion, std::sqrt(8.0 / static_cast<double>(window)), f.dispersion_noise});
  if (c.poisson_within_noise)
    f.process = ArrivalProcess::poisson();
  else if (c.batch_nearer)
    f.process = ArrivalProcess::batch(std::max(1.0, round2(f.dispersion)));
  else
    f.process = ArrivalProcess::gamma(std::max(0.01, round2(f.gap_cv2)));
  char why[400];
  std::snprintf(why, sizeof why,
                "%s: gap CV^2 %.3f, count dispersion %.3f +- %.3f (the runtime's scale: windows of %d arrivals, bins "
                "of %d, the median of %d windows; the rate's modulation within a window, rate CV^2 %.3f)",
                arrival_process_text(f.process).c_str(), f.gap_cv2, f.dispersion, f.dispersion_noise, window,
                BurstinessEstimator::kBinMean, reads, median(modulation));
  f.reason = why;
  return f;
}

}  // namespace

FitScale parse_fit_scale(const std::string& text) {
  if (text == "trace") return FitScale::kTrace;
  if (text == "runtime") return FitScale::kRuntime;
  throw std::invalid_argument("--fit-scale: trace or runtime, not '" + text + "'");
}

ArrivalFit fit_arrival_process(const std::vector<std::int64_t>& t, FitScale scale) {
  ArrivalFit f;
  f.arrivals = static_cast<int>(t.size());
  if (f.arrivals < kMinFitArrivals)
    throw std::invalid_argument("too few arrivals to fit (" + std::to_string(f.arrivals) + ", need at least " +
                                std::to_string(kMinFitArrivals) + ")");
  for (std::size_t i = 1; i < t.size(); ++i)
    if (t[i] < t[i - 1]) throw std::invalid_argument("arrival times go backwards at arrival " + std::to_string(i + 1));
  const double span_s = static_cast<double>(t.back() - t.front()) / 1e6;
  if (!(span_s > 0)) throw std::invalid_argument("all arrivals at one time: no rate to fit");
  if (scale == FitScale::kRuntime) return fit_at_runtime_scale(t);

  double sum = 0, sum2 = 0;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const double g = static_cast<double>(t[i] - t[i - 1]);
    sum += g;
    sum2 += g * g;
  }
  const double n = static_cast<double>(t.size() - 1), mean = sum / n;
  f.gap_cv2 = (sum2 / n - mean * mean) / (mean * mean);

  // Counts in windows holding kFitWindowMean arrivals on average.
  const double rate_per_us = n / static_cast<double>(t.back() - t.front());
  const double window_us = kFitWindowMean / rate_per_us;
  const int windows = static_cast<int>(static_cast<double>(t.back() - t.front()) / window_us);
  if (windows < 10) throw std::invalid_argument("too few arrivals to fit: fewer than 10 count windows");
  std::vector<double> counts(windows, 0.0);
  for (auto x : t) {
    const int w = static_cast<int>(static_cast<double>(x - t.front()) / window_us);
    if (w < windows) counts[w] += 1;
  }
  double cs = 0, cs2 = 0;
  for (double c : counts) {
    cs += c;
    cs2 += c * c;
  }
  const double cm = cs / windows;
  f.dispersion = (cs2 / windows - cm * cm) / cm;
  // Under Poisson, the sample index of dispersion has standard error sqrt(2 / (windows - 1)).
  f.dispersion_noise = std::sqrt(2.0 / (windows - 1));
  const double gap_noise = 3.0 / std::sqrt(n);  // CV^2 of exponential gaps: se ~ sqrt(8 / n), generously

  char why[400];
  const ArrivalClass c = classify_arrivals(ArrivalStatistics{f.gap_cv2, f.dispersion, gap_noise, f.dispersion_noise});
  if (c.poisson_within_noise) {
    f.process = ArrivalProcess::poisson();
    std::snprintf(why, sizeof why,
                  "poisson: gap CV^2 %.3f and count dispersion %.3f (windows of %.0f arrivals) are both within 3 "
                  "standard errors of 1",
                  f.gap_cv2, f.dispersion, kFitWindowMean);
  } else {
    // Parameters rounded to 2 significant digits: a policy per pattern, not per trace.
    if (c.batch_nearer) {
      f.process = ArrivalProcess::batch(std::max(1.0, round2(f.dispersion)));
    } else {
      f.process = ArrivalProcess::gamma(std::max(0.01, round2(f.gap_cv2)));
    }
    std::snprintf(why, sizeof why,
                  "%s: gap CV^2 %.3f, count dispersion %.3f +- %.3f (windows of %.0f arrivals); gamma would give gap "
                  "CV^2 = dispersion, batch %.3f: %s is nearer",
                  arrival_process_text(f.process).c_str(), f.gap_cv2, f.dispersion, f.dispersion_noise, kFitWindowMean,
                  batch_gap_cv2(std::max(1.0, f.dispersion)), c.batch_nearer ? "batch" : "gamma");
  }
  f.reason = why;
  return f;
}

namespace {

// Index of dispersion of counts in windows of window_us from the first
// arrival; {0, 0} with fewer than 10 whole windows.
std::pair<double, int> dispersion_at(const std::vector<std::int64_t>& t, double window_us) {
  const int windows = static_cast<int>(static_cast<double>(t.back() - t.front()) / window_us);
  if (windows < 10) return {0, 0};
  std::vector<double> counts(static_cast<std::size_t>(windows), 0.0);
  for (auto x : t) {
    const auto w = static_cast<std::size_t>(static_cast<double>(x - t.front()) / window_us);
    if (w < counts.size()) counts[w] += 1;
  }
  double s = 0, s2 = 0;
  for (double c : counts) {
    s += c;
    s2 += c * c;
  }
  const double m = s / windows;
  return {m > 0 ? (s2 / windows - m * m) / m : 0, windows};
}

// The arrivals on the time axis where the rate smoothed over `smooth_us`
// (centred, in bins of bin_us) is the trace's mean: Lambda(t) / mean rate.
std::vector<std::int64_t> rate_normalised(const std::vector<std::int64_t>& t, double smooth_us) {
  const double bin_us = 100'000;
  const auto bins = static_cast<std::size_t>(static_cast<double>(t.back() - t.front()) / bin_us) + 1;
  std::vector<double> counts(bins, 0.0);
  for (auto x : t) counts[static_cast<std::size_t>(static_cast<double>(x - t.front()) / bin_us)] += 1;
  const auto half = static_cast<std::size_t>(std::max(0.0, std::round(smooth_us / bin_us / 2)));
  std::vector<double> prefix(bins + 1, 0.0);
  for (std::size_t i = 0; i < bins; ++i) prefix[i + 1] = prefix[i] + counts[i];
  std::vector<double> rate(bins), cum(bins + 1, 0.0);  // arrivals per bin, smoothed; cumulative
  for (std::size_t i = 0; i < bins; ++i) {
    const std::size_t lo = i >= half ? i - half : 0, hi = std::min(bins, i + half + 1);
    rate[i] = (prefix[hi] - prefix[lo]) / static_cast<double>(hi - lo);
    cum[i + 1] = cum[i] + rate[i];
  }
  const double per_us = cum[bins] / (static_cast<double>(bins) * bin_us);  // mean arrivals per us of the axis
  std::vector<std::int64_t> out;
  out.reserve(t.size());
  for (auto x : t) {
    const double at = static_cast<double>(x - t.front()) / bin_us;
    const auto b = std::min(bins - 1, static_cast<std::size_t>(at));
    const double lambda = cum[b] + rate[b] * (at - static_cast<double>(b));
    out.push_back(static_cast<std::int64_t>(std::llround(lambda / per_us)));
  }
  for (std::size_t i = 1; i < out.size(); ++i) out[i] = std::max(out[i], out[i - 1]);  // rounding only
  return out;
}

}  // namespace

TrackedFit fit_tracked_arrivals(const std::vector<std::int64_t>& t) {
  TrackedFit f;
  f.whole = fit_arrival_process(t);  // checks order, count and span
  f.short_range = f.whole;
  const double span_us = static_cast<double>(t.back() - t.front());
  f.mean_qps = static_cast<double>(t.size() - 1) / span_us * 1e6;
  f.idc_short = f.whole.dispersion;
  const auto one = dispersion_at(t, 1e6), ten = dispersion_at(t, 1e7);
  f.idc_1s = one.first;
  f.idc_10s = ten.first;
  // Growth: at 1 s, or at the longest window with at least 10 counts up to
  // 10 s, the dispersion is well above (1.5x and 3 standard errors) the short one's.
  const double short_window_us = kFitWindowMean / f.mean_qps * 1e6;
  auto grows_at = [&](std::pair<double, int> at, double window_us) {
    const double noise = at.first * std::sqrt(2.0 / std::max(1, at.second - 1));
    return at.second > 0 && window_us > 2 * short_window_us &&
           at.first > 1.5 * f.idc_short + 3 * noise + 3 * f.whole.dispersion_noise;
  };
  const double long_window_us = ten.second > 0 ? 1e7 : span_us / 10;
  const auto longest = ten.second > 0 ? ten : dispersion_at(t, long_window_us);
  // A rate that moves at about the short window already (1 s states at 100
  // QPS) has levelled off there: no growth, but counts far more dispersed
  // than any burst the gaps allow (batch:D's gap CV^2 is the most a
  // stationary burst gives; kRateDispersionExcess times its D).
  const double burst_d = batch_dispersion_for_gap_cv2(f.whole.gap_cv2);
  const bool excess = f.idc_short > kRateDispersionExcess * burst_d + 3 * f.whole.dispersion_noise;
  const bool grows = grows_at(one, 1e6) || grows_at(longest, long_window_us) || excess;
  const double per_window = f.mean_qps * static_cast<double>(kLoadWindowUs) / 1e6;
  char why[1000];
  auto idc_text = [&] {  // 3 significant digits, no exponent (2340, not 2.34e+03)
    auto n = [](double v) {
      char text[32];
      std::snprintf(text, sizeof text, v >= 1000 ? "%.0f" : "%.3g", v);
      return std::string(text);
    };
    if (f.idc_10s > 0)
      return "count dispersion " + n(f.idc_short) + " at 50 arrivals, " + n(f.idc_1s) + " at 1 s, " + n(f.idc_10s) +
             " at 10 s";
    return "count dispersion " + n(f.idc_short) + " at 50 arrivals, " + n(longest.first) + " over " +
           n(long_window_us / 1e6) + " s";
  };
  if (!grows) {
    std::snprintf(why, sizeof why, "stationary (%s: no growth with the window): %s", idc_text().c_str(),
                  f.whole.reason.c_str());
    f.reason = why;
    return f;
  }
  if (per_window < 20) {
    std::snprintf(why, sizeof why, "one stationary process (%s): %s", idc_text().c_str(), f.whole.reason.c_str());
    f.reason = why;
    char warn[300];
    std::snprintf(warn, sizeof warn,
                  "the rate moves, but a %.0f ms load window holds %.1f arrivals at %.3g QPS, too few to track it; "
                  "fitted as one stationary process",
                  static_cast<double>(kLoadWindowUs) / 1e3, per_window, f.mean_qps);
    f.warning = warn;
    return f;
  }
  f.modulated = true;
  const double smooth_us = std::max(static_cast<double>(kLoadWindowUs), kTrackedSmoothArrivals / f.mean_qps * 1e6);
  f.short_range = fit_arrival_process(rate_normalised(t, smooth_us));
  // The rate-normalised counts still carry the swings faster than the
  // smoothing; a gap spans 1/rate, far below it, so the short-range
  // burstiness is read from the gaps: bursts (arrivals sharing a timestamp)
  // as batch:D with the gap CV^2 batch:D gives, else gamma:(gap CV^2), or
  // Poisson within 3 standard errors.
  std::size_t shared = 0;
  for (std::size_t i = 1; i < t.size(); ++i) shared += t[i] == t[i - 1];
  const double shared_share = static_cast<double>(shared) / static_cast<double>(t.size() - 1);
  const double cv2 = f.short_range.gap_cv2;
  char family[200];
  if (shared_share > kBurstSharedShare) {
    const double hi = batch_dispersion_for_gap_cv2(cv2);
    f.short_range.process = ArrivalProcess::batch(std::max(1.0, round2(hi)));
    std::snprintf(family, sizeof family, "%.0f%% of arrivals share a timestamp: bursts, batch with gap CV^2 %.3f",
                  shared_share * 100, cv2);
  } else if (std::abs(cv2 - 1) <= 3 * 3.0 / std::sqrt(static_cast<double>(t.size()))) {
    f.short_range.process = ArrivalProcess::poisson();
    std::snprintf(family, sizeof family, "gap CV^2 %.3f within 3 standard errors of 1", cv2);
  } else {
    f.short_range.process = ArrivalProcess::gamma(std::max(0.01, round2(cv2)));
    std::snprintf(family, sizeof family, "no shared timestamps: renewal with gap CV^2 %.3f", cv2);
  }
  char normalised[400];
  std::snprintf(normalised, sizeof normalised, "%s: %s (count dispersion %.3g at 50 arrivals)",
                arrival_process_text(f.short_range.process).c_str(), family, f.short_range.dispersion);
  f.short_range.reason = normalised;
  const auto shares = served_load_shares(t);
  auto quantile = [&](double q) {
    double acc = 0;
    for (const auto& [load, share] : shares)
      if ((acc += share) >= q) return load;
    return shares.back().first;
  };
  std::snprintf(why, sizeof why,
                "rate modulation (%s: %s), tracked by the load (%.0f ms load estimates 5/50/95%%: "
                "%.0f/%.0f/%.0f QPS); short range, on the rate-normalised arrivals (smoothed over %.3g s): %s",
                idc_text().c_str(),
                excess && !(grows_at(one, 1e6) || grows_at(longest, long_window_us))
                    ? "far above the bursts the gaps allow"
                    : "grows with the window",
                static_cast<double>(kLoadWindowUs) / 1e3, quantile(0.05), quantile(0.5), quantile(0.95),
                smooth_us / 1e6, f.short_range.reason.c_str());
  f.reason = why;
  if (f.short_range.dispersion > 2 * std::max(1.0, cv2) + 1) {
    char warn[300];
    std::snprintf(warn, sizeof warn,
                  "the rate-normalised arrivals still disperse more (%.4g at 50 arrivals) than their gaps say (CV^2 "
                  "%.3g): the rate swings faster than the %.0f ms load window are not modelled, expect the error "
                  "docs/user-guide.md measures for 1 s states",
                  f.short_range.dispersion, cv2, static_cast<double>(kLoadWindowUs) / 1e3);
    f.warning = warn;
  }
  return f;
}

std::vector<std::pair<double, double>> served_load_shares(const std::vector<std::int64_t>& t, double scale,
                                                          std::int64_t window_us) {
  if (t.empty() || !(scale > 0)) throw std::invalid_argument("served_load_shares: no arrivals or a bad scale");
  return load_estimate_shares(t, scale, window_us);
}

LoadExpectation served_mixture(const std::vector<std::pair<double, double>>& shares,
                               const std::vector<LoadExpectation>& grid) {
  if (grid.empty()) throw std::invalid_argument("served_mixture: no grid loads");
  std::vector<GridFigures> figures;
  figures.reserve(grid.size());
  for (const auto& g : grid) figures.push_back({g.load_qps, g.accuracy, g.violation});
  const GridFigures m = envelope_mixture(shares, figures);
  return {m.load_qps, m.accuracy, m.violation};
}

}  // namespace lull::compiler
