#pragma once
// Poisson probabilities computed the way scipy.stats.poisson.pmf does
// (exp(k log mu - lgamma(k+1) - mu)), so that underflow to zero happens in the
// same places as in the reference implementation.
#include <vector>

namespace lull::compiler {

double poisson_pmf(int k, double mu);

// pmf for k = 0..kmax-1
std::vector<double> poisson_pmf_range(int kmax, double mu);

// Smallest k such that the upper tail beyond it is negligible (< ~1e-18) for mean mu.
int poisson_support_end(double mu);

}  // namespace lull::compiler
