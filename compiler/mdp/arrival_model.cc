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
// K workers) queue behind it. The idle state's phases z >= K carry them, for
// every visit of (1, J), also those without an idle spell (where z < K).
// Where that happens more often than this, the model is approximate.
constexpr double kSiblingShareExact = 1e-3;

// P(R >= K): a query's burst brings its worker another query at the same instant.
double same_worker_sibling_share(const std::vector<double>& w, int K) {
  double tail = 0;
  for (std::size_t r = static_cast<std::size_t>(K); r < w.size(); ++r) tail += w[r];
  return tail;
}

}  // namespace

namespace {

// P(X = k) = beta^k / (k ln D), beta = 1 - 1/D, as pmf[k - 1].
std::vector<double> burst_size_pmf(double D) {
  const double beta = 1 - 1 / D;
  std::vector<double> pmf;
  double p = beta / std::log(D);
  for (int k = 1; k <= 100000 && (p > 1e-19 || k < 2); ++k) {
    pmf.push_back(p);
    p *= beta * k / (k + 1);
  }
  return pmf;
}

}  // namespace

std::vector<double> idle_burst_residual(double D, int K) {
  const std::vector<double> pmf = burst_size_pmf(D);
  std::vector<double> v(pmf.size());
  double window = 0, norm = 0;  // window = P(z < X <= z + K), slid from the far end
  for (std::size_t z = pmf.size(); z-- > 0;) {
    window += pmf[z];                              // X = z + 1 enters
    if (z + K < pmf.size()) window -= pmf[z + K];  // X = z + K + 1 leaves
    v[z] = std::max(0.0, window);
  }
  for (std::size_t k = 0; k < pmf.size(); ++k) norm += pmf[k] * std::min<double>(k + 1, K);  // E[min(X, K)]
  for (double& x : v) x /= norm;
  while (v.size() > 1 && v.back() < 1e-17) v.pop_back();
  return v;
}

std::vector<double> burst_residual(double D) {
  // E[X] = (D - 1) / ln D.
  const double mean = (D - 1) / std::log(D);
  const std::vector<double> pmf = burst_size_pmf(D);
  std::vector<double> w(pmf.size());
  double tail = 0;  // P(X > r) = sum of pmf[i], i >= r, summed from the far end
  for (std::size_t r = pmf.size(); r-- > 0;) {
    tail += pmf[r];
    w[r] = tail / mean;
  }
  while (w.size() > 1 && w.back() < 1e-17) w.pop_back();
  return w;
}

namespace {

ArrivalModel uncapped_model(const ArrivalProcess& process, int workers, double load_qps) {
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
      m.same_instant_bursts = true;
      const double share = same_worker_sibling_share(m.burst_residual, workers);
      m.idle_residual = idle_burst_residual(D, workers);
      m.exact = share < kSiblingShareExact;
      m.description =
          "batch:" + number_text(D) +
          (m.exact ? ": exact (negative-binomial counts, burst siblings in the phase prior)"
                   : ": APPROXIMATE (negative-binomial counts, but " + number_text(std::round(1000 * share) / 10) +
                         "% of queries bring their worker another of the same burst at once: phases "
                         "past K at the idle state (1, J), also where it was reached without idling)");
      return m;
    }
    case ArrivalProcess::Kind::kGamma:
      break;
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
  if (m.dispersion != 1) {
    m.burst_residual = burst_residual(m.dispersion);
    // The stream's bursts stand for gaps far below the mean (worker CV^2 > 1/K'):
    // an idle worker's first query is soon followed by more. Treating them as
    // same-instant, as for batch arrivals, brought the expected accuracy at
    // K = 4, gamma:8 from 1.3-1.8 points above the simulated to 0.4-1.1.
    m.same_instant_bursts = true;
    m.idle_residual = idle_burst_residual(m.dispersion, m.phases);
  }
  m.exact = false;
  m.description = "gamma:" + number_text(c) + ": APPROXIMATE (K/CV2 = " + number_text(ratio) +
                  " not whole: the worker gets every " + std::to_string(m.phases) +
                  "-th query of a batch stream with dispersion " + number_text(m.dispersion) +
                  ", matching the per-worker rate and count dispersion CV2/K)";
  return m;
}

}  // namespace

ArrivalModel arrival_model(const ArrivalProcess& process, int workers, double load_qps, int phase_cap) {
  ArrivalModel m = uncapped_model(process, workers, load_qps);
  if (phase_cap <= 0 || m.phases <= phase_cap) return m;
  const int from = m.phases;
  const double worker_qps = m.rate_per_us * 1e6 / from;
  const bool batch = process.kind == ArrivalProcess::Kind::kBatch && m.dispersion != 1;
  // Poisson and Gamma (exact or not): Poisson with cap phases. batch:D: its bursts, over cap workers.
  m = batch ? uncapped_model(process, phase_cap, worker_qps * phase_cap)
            : uncapped_model(ArrivalProcess::poisson(), phase_cap, worker_qps * phase_cap);
  m.capped_from = from;
  m.exact = false;
  m.description = "phase-capped, APPROXIMATE: " + std::to_string(from) + " phases modelled as " +
                  std::to_string(phase_cap) + " at the same rate per worker, of a " +
                  (batch ? "batch:" + number_text(m.dispersion) : std::string("Poisson")) +
                  " stream (--phase-cap; docs/user-guide.md, large fleets)";
  return m;
}

}  // namespace lull::compiler
