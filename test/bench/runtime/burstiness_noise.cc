// The burstiness estimator's noise against its window (docs/solver.md,
// "The runtime sees the pattern"): for each process and window, the
// estimator runs over arrivals drawn by the simulator's sampler
// (runtime/sim/arrivals.h) and is read once per window length of fresh
// arrivals (independent readings); printed: the 5%, 50% and 95% of the gap
// CV^2, the count dispersion and the classified burstiness, and how often
// the classification names the right family. EVERY > 1: the estimator sees
// every EVERY-th arrival (a shard of EVERY) and estimates the whole stream.
// Usage: lull_burstiness_noise [QPS] [READINGS] [EVERY]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/burstiness_estimator.h"
#include "runtime/sim/arrivals.h"

namespace {

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const double qps = argc > 1 ? std::atof(argv[1]) : 1000;
  const int readings = argc > 2 ? std::atoi(argv[2]) : 200;
  const int every = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  using lull::ArrivalProcess;
  const std::vector<ArrivalProcess> processes = {
      ArrivalProcess::poisson(), ArrivalProcess::gamma(2), ArrivalProcess::gamma(4), ArrivalProcess::gamma(8),
      ArrivalProcess::batch(2),  ArrivalProcess::batch(4), ArrivalProcess::batch(8)};
  std::printf("%.0f QPS, %d readings each, every %d-th arrival seen\n", qps, readings, every);
  std::printf(
      "process    window  bin  gap_cv2 5/50/95%%        dispersion 5/50/95%%     estimate 5/50/95%%       right "
      "family\n");
  for (const auto& p : processes) {
    for (const auto& [window, bin] : std::vector<std::pair<int, int>>{{500, 50},
                                                                      {1000, 50},
                                                                      {2000, 50},
                                                                      {4000, 50},
                                                                      {5000, 50},
                                                                      {8000, 50},
                                                                      {2000, 20},
                                                                      {4000, 20},
                                                                      {8000, 20},
                                                                      {16000, 20}}) {
      lull::sim::RateArrivals source({{0, 1e12, qps}}, p, 11);
      lull::core::BurstinessEstimator e(window, bin);
      std::int64_t t = 0;
      e.set_thinning(every);
      const auto feed = [&] {
        for (int k = 0; k < every; ++k) source.next(&t);
        e.record(t);
      };
      std::vector<double> cv2, disp, est;
      int right = 0;
      for (int i = 0; i < 2 * window; ++i) feed();  // warm-up: the first bins
      for (int r = 0; r < readings; ++r) {
        for (int i = 0; i < window; ++i) feed();
        const auto s = e.estimate();
        cv2.push_back(s.gap_cv2);
        disp.push_back(s.dispersion);
        est.push_back(s.process.burstiness());
        const bool poisson = s.process.is_poisson();
        right += p.is_poisson() ? poisson : (!poisson && s.process.kind == p.kind);
      }
      std::printf("%-9s %6d  %3d  %5.2f %5.2f %5.2f        %5.2f %5.2f %5.2f        %5.2f %5.2f %5.2f        %3.0f%%\n",
                  lull::arrival_process_text(p).c_str(), window, bin, quantile(cv2, .05), quantile(cv2, .5),
                  quantile(cv2, .95), quantile(disp, .05), quantile(disp, .5), quantile(disp, .95), quantile(est, .05),
                  quantile(est, .5), quantile(est, .95), 100.0 * right / readings);
    }
  }
  return 0;
}
