#include "compiler/mdp/poisson.h"

#include <cmath>

namespace lull::compiler {

double poisson_pmf(int k, double mu) {
  if (k < 0) return 0.0;
  if (mu <= 0) return k == 0 ? 1.0 : 0.0;
  return std::exp(k * std::log(mu) - std::lgamma(k + 1.0) - mu);
}

std::vector<double> poisson_pmf_range(int kmax, double mu) {
  std::vector<double> out(static_cast<std::size_t>(kmax));
  for (int k = 0; k < kmax; ++k) out[k] = poisson_pmf(k, mu);
  return out;
}

int poisson_support_end(double mu) {
  // Chernoff-style margin: beyond mu + 14 sqrt(mu) + 45 the tail is far below 1e-18.
  return static_cast<int>(std::ceil(mu + 14.0 * std::sqrt(mu) + 45.0));
}

}  // namespace lull::compiler
