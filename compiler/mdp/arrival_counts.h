#pragma once
// Counts of the MDP's "counting stream" in an interval (mdp-spec section 4
// generalized, docs/solver.md): Poisson counts, or negative-binomial counts
// of a compound Poisson stream with logarithmic burst sizes and index of
// dispersion D > 1:
//   p_mu(k) = Gamma(k + r) / (k! Gamma(r)) * (1/D)^r * beta^k,
//   r = mu / (D - 1), beta = 1 - 1/D, mean mu, variance D mu.
// D == 1 is Poisson, computed exactly as poisson.h does (bit for bit the
// reference mode). Callable on the host and in CUDA device code.
#include <math.h>

#include "compiler/host_device.h"
#include "compiler/mdp/poisson.h"

namespace lull::compiler {

LULL_HD inline double negbin_pmf(int k, double mu, double D) {
  if (k < 0) return 0.0;
  if (mu <= 0) return k == 0 ? 1.0 : 0.0;
  const double r = mu / (D - 1);
  return exp(log_gamma(k + r) - log_gamma(k + 1.0) - log_gamma(r) - r * log(D) + k * log1p(-1.0 / D));
}

LULL_HD inline double count_pmf(int k, double mu, double D) {
  return D == 1.0 ? poisson_pmf(k, mu) : negbin_pmf(k, mu, D);
}

// Smallest k past which the tail is negligible: Poisson's margin for D = 1;
// for D > 1 the variance is D mu and the tail decays like beta^k, so the
// margin grows with D (beta^(45 D) < e^-45).
LULL_HD inline int count_support_end(double mu, double D) {
  if (D == 1.0) return poisson_support_end(mu);
  const double end = ceil(mu + 14.0 * sqrt(D * mu) + 45.0 * D);  // saturates as poisson_support_end does
  return end < kPoissonSupportCap ? static_cast<int>(end) : kPoissonSupportCap;
}

// out[k] = p_mu(k), k = 0..len-1, by the ratio p(k+1)/p(k) = (k + r) beta / (k + 1)
// in log space (one exp per entry instead of three lgamma).
// For D == 1, log_factorial (entry k = log_gamma(k + 1.0), len entries at
// least) saves an lgamma per entry where given (nullptr: none).
LULL_HD inline void count_pmf_row(double mu, double D, int len, double* out, const double* log_factorial = nullptr) {
  if (D == 1.0 && log_factorial) {
    poisson_pmf_row(0, len, mu, log_factorial, out);
    return;
  }
  if (D == 1.0 || mu <= 0) {
    for (int k = 0; k < len; ++k) out[k] = count_pmf(k, mu, D);
    return;
  }
  const double r = mu / (D - 1), log_beta = log1p(-1.0 / D);
  double lp = -r * log(D);
  for (int k = 0; k < len; ++k) {
    out[k] = exp(lp);
    lp += log((k + r) / (k + 1.0)) + log_beta;
  }
}

}  // namespace lull::compiler
