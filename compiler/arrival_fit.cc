#include "compiler/arrival_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "schema/arrival_classify.h"

namespace lull::compiler {

ArrivalFit fit_arrival_process(const std::vector<std::int64_t>& t) {
  ArrivalFit f;
  f.arrivals = static_cast<int>(t.size());
  if (f.arrivals < kMinFitArrivals)
    throw std::invalid_argument("too few arrivals to fit (" + std::to_string(f.arrivals) + ", need at least " +
                                std::to_string(kMinFitArrivals) + ")");
  for (std::size_t i = 1; i < t.size(); ++i)
    if (t[i] < t[i - 1]) throw std::invalid_argument("arrival times go backwards at arrival " + std::to_string(i + 1));
  const double span_s = static_cast<double>(t.back() - t.front()) / 1e6;
  if (!(span_s > 0)) throw std::invalid_argument("all arrivals at one time: no rate to fit");

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
    auto round2 = [](double v) {  // via text: the double nearest the two-digit decimal
      char text[32];
      std::snprintf(text, sizeof text, "%.2g", v);
      return std::strtod(text, nullptr);
    };
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

}  // namespace lull::compiler
