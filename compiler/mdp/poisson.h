#pragma once
// Poisson probabilities computed the way scipy.stats.poisson.pmf does
// (exp(k log mu - lgamma(k+1) - mu)), so that underflow to zero happens in the
// same places as in the reference implementation. Callable on the host and in
// CUDA device code (the factored solver's element functions use them).
#include <math.h>

#include "compiler/host_device.h"

namespace lull::compiler {

// log Gamma(x). On the host, lgamma_r: plain lgamma writes the global signgam,
// a data race when the solver's OpenMP threads fill tables (ThreadSanitizer
// reports it); glibc's lgamma is lgamma_r plus that write, so the values are
// the same bits. Device code has no signgam.
LULL_HD inline double log_gamma(double x) {
#ifdef __CUDA_ARCH__
  return lgamma(x);
#else
  int sign = 0;
  return lgamma_r(x, &sign);
#endif
}

LULL_HD inline double poisson_pmf(int k, double mu) {
  if (k < 0) return 0.0;
  if (mu <= 0) return k == 0 ? 1.0 : 0.0;
  return exp(k * log(mu) - log_gamma(k + 1.0) - mu);
}

// The largest support end poisson_support_end returns: a mean this large
// (a latency of ~1e9 arrivals) saturates instead of overflowing int, and the
// tables sized by it are then refused by the solver's memory estimate.
inline constexpr int kPoissonSupportCap = 1 << 30;

// Smallest k such that the upper tail beyond it is negligible (< ~1e-18) for
// mean mu: a Chernoff-style margin, mu + 14 sqrt(mu) + 45, at most
// kPoissonSupportCap (NaN too: the cast of an out-of-range double is undefined).
LULL_HD inline int poisson_support_end(double mu) {
  const double end = ceil(mu + 14.0 * sqrt(mu) + 45.0);
  return end < kPoissonSupportCap ? static_cast<int>(end) : kPoissonSupportCap;
}

}  // namespace lull::compiler
