#include "compiler/mdp/arrival_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "schema/number_text.h"

namespace lull::compiler {
namespace {

// Below this distance from 1 a dispersion is Poisson: the negative binomial's
// lgamma differences lose precision as r = mu / (D - 1) grows.
constexpr double kPoissonDispersionEps = 1e-9;

// The runtime dispatches the first query of a burst to an idle worker at once;
// the worker's later siblings of that burst (when a burst outlasts a round of
// K workers) queue behind it, which the MDP's idle step (to (1, J)) does not
// model. Where that happens more often than this, the model is approximate.
constexpr double kSiblingShareExact = 1e-3;

// P(R >= K): a query's burst brings its worker another query at the same instant.
double same_worker_sibling_share(const std::vector<double>& w, int K) {
  double tail = 0;
  for (std::size_t r = static_cast<std::size_t>(K); r < w.size(); ++r) tail += w[r];
  return tail;
}

}  // namespace

std::vector<double> burst_residual(double D) {
  // P(X = k) = beta^k / (k ln D), beta = 1 - 1/D; E[X] = (D - 1) / ln D.
  const double beta = 1 - 1 / D, mean = (D - 1) / std::log(D);
  std::vector<double> pmf;  // pmf[k - 1]
  double p = beta / std::log(D);
  for (int k = 1; k <= 100000 && (p > 1e-19 || k < 2); ++k) {
    pmf.push_back(p);
    p *= beta * k / (k + 1);
  }
  std::vector<double> w(pmf.size());
  double tail = 0;  // P(X > r) = sum of pmf[i], i >= r, summed from the far end
  for (std::size_t r = pmf.size(); r-- > 0;) {
    tail += pmf[r];
    w[r] = tail / mean;
  }
  while (w.size() > 1 && w.back() < 1e-17) w.pop_back();
  return w;
}

ArrivalModel arrival_model(const ArrivalProcess& process, int workers, double load_qps) {
  ArrivalModel m;
  m.phases = workers;
  m.rate_per_us = load_qps / 1e6;
  const std::string K = std::to_string(workers);
  switch (process.kind) {
    case ArrivalProcess::Kind::kUniform:
      throw std::invalid_argument("--arrivals uniform: no MDP models evenly spaced arrivals");
    case ArrivalProcess::Kind::kPoisson:
      m.description = "poisson: exact (mdp-spec section 4)";
      return m;
    case ArrivalProcess::Kind::kBatch: {
      const double D = process.dispersion;
      if (!(D >= 1 && std::isfinite(D))) throw std::invalid_argument("--arrivals batch:D needs a finite D >= 1");
      if (D - 1 < kPoissonDispersionEps) {
        m.description = "batch:1 is poisson: exact";
        return m;
      }
      m.dispersion = D;
      m.burst_residual = burst_residual(D);
      const double share = same_worker_sibling_share(m.burst_residual, workers);
      m.exact = share < kSiblingShareExact;
      m.description = "batch:" + number_text(D) +
                      (m.exact ? ": exact (negative-binomial counts, burst siblings in the phase prior)"
                               : ": APPROXIMATE (negative-binomial counts, but " + number_text(std::round(1000 * share) / 10) +
                                     "% of queries bring their worker another of the same burst at once, which the "
                                     "MDP's idle step does not model)");
      return m;
    }
    case ArrivalProcess::Kind::kGamma: break;
  }
  const double c = process.cv2;
  if (!(c > 0 && std::isfinite(c))) throw std::invalid_argument("--arrivals gamma:CV2 needs a finite CV2 > 0");
  if (c == 1) {
    m.description = "gamma:1 is poisson: exact";
    return m;
  }
  const double ratio = workers / c;
  const double whole = std::round(ratio);
  if (whole >= 1 && std::fabs(ratio - whole) <= 1e-9 * ratio) {
    m.phases = static_cast<int>(whole);
    m.rate_per_us = load_qps / 1e6 * m.phases / workers;
    m.description = "gamma:" + number_text(c) + ": exact (K/CV2 = " + std::to_string(m.phases) +
                    ": the worker's gaps are Erlang(" + std::to_string(m.phases) + "))";
    return m;
  }
  m.phases = static_cast<int>(std::ceil(ratio));
  m.rate_per_us = load_qps / 1e6 * m.phases / workers;
  m.dispersion = m.phases * c / workers;
  if (m.dispersion - 1 < kPoissonDispersionEps) m.dispersion = 1;
  if (m.dispersion != 1) m.burst_residual = burst_residual(m.dispersion);
  m.exact = false;
  m.description = "gamma:" + number_text(c) + ": APPROXIMATE (K/CV2 = " + number_text(ratio) + " not whole: the worker gets every " +
                  std::to_string(m.phases) + "-th query of a batch stream with dispersion " + number_text(m.dispersion) +
                  ", matching the per-worker rate and count dispersion CV2/K)";
  return m;
}

}  // namespace lull::compiler
