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

// p_mu(k) from log(mu) and log(k!) = log_gamma(k + 1.0): the one expression
// of poisson_pmf and poisson_pmf_row (mu > 0, k >= 0).
LULL_HD inline double poisson_pmf_of_logs(int k, double mu, double log_mu, double log_k_factorial) {
  return exp(k * log_mu - log_k_factorial - mu);
}

LULL_HD inline double poisson_pmf(int k, double mu) {
  if (k < 0) return 0.0;
  if (mu <= 0) return k == 0 ? 1.0 : 0.0;
  return poisson_pmf_of_logs(k, mu, log(mu), log_gamma(k + 1.0));
}

// out[k] = poisson_pmf(first + k, mu), k = 0..len-1, first >= 0, the same
// bits: log(mu) taken once and log((first + k)!) read from log_factorial
// (entry i = log_gamma(i + 1.0), at least first + len entries) instead of
// an lgamma per entry.
LULL_HD inline void poisson_pmf_row(int first, int len, double mu, const double* log_factorial, double* out) {
  if (mu <= 0) {
    for (int k = 0; k < len; ++k) out[k] = first + k == 0 ? 1.0 : 0.0;
    return;
  }
  const double log_mu = log(mu);
  for (int k = 0; k < len; ++k) out[k] = poisson_pmf_of_logs(first + k, mu, log_mu, log_factorial[first + k]);
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
