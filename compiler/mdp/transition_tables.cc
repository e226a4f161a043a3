#include "compiler/mdp/transition_tables.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/mdp/poisson.h"

namespace lull::compiler {

std::size_t TransitionTables::bytes() const {
  return sizeof(double) * (phase.size() + pass.size() + kernel.size() + tau_pass.size() + tau_kernel.size() +
                           count_prob.size()) +
         sizeof(std::size_t) * count_begin.size() + sizeof(int) * tau_bucket.size();
}

void phase_distribution(int n, double age_us, double lambda_per_us, int K, double* out) {
  const double mu = lambda_per_us * age_us;
  bool any_zero = false;
  for (int q = 0; q < K; ++q) {
    out[q] = poisson_pmf((n - 1) * K + q, mu);
    any_zero |= out[q] == 0.0;
  }
  // As the reference does: lift underflowed entries so the row stays a distribution.
  if (any_zero)
    for (int q = 0; q < K; ++q) out[q] += std::numeric_limits<double>::denorm_min();
  double sum = 0;
  for (int q = 0; q < K; ++q) sum += out[q];
  for (int q = 0; q < K; ++q) out[q] /= sum;
}

void fill_pass_table(double lambda_per_us, double width_us, double remaining_us, int K, int N, double* out) {
  const int cols = N + 1;
  std::fill(out, out + static_cast<std::size_t>(K) * cols, 0.0);
  const double mu_x = lambda_per_us * std::max(0.0, width_us);
  const double mu_y = lambda_per_us * std::max(0.0, remaining_us);
  const int full = (N + 1) * K;  // z + arrivals >= full: the queue overflows
  const int xend = poisson_support_end(mu_x);  // arrivals past `full` all count to F
  const auto px = poisson_pmf_range(xend, mu_x);
  // CDF and survival of Y (arrivals after the bucket), up to `full`.
  const int yend = std::max(full + 1, 1);
  const auto py = poisson_pmf_range(std::max(yend, poisson_support_end(mu_y)), mu_y);
  std::vector<double> cdf(static_cast<std::size_t>(yend), 0.0), sf(static_cast<std::size_t>(yend) + 1, 0.0);
  double acc = 0;
  for (int y = 0; y < yend; ++y) {
    acc += py[y];
    cdf[y] = acc;
  }
  // sf[y] = P(Y >= y), summed from the tail for accuracy.
  double tail = 0;
  for (int y = static_cast<int>(py.size()) - 1; y >= 0; --y) {
    tail += py[y];
    if (y < yend + 1) sf[y] = tail;
  }
  auto F = [&](int y) { return y < 0 ? 0.0 : (y >= yend ? 1.0 : cdf[y]); };
  auto SF = [&](int y) { return y <= 0 ? 1.0 : (y > static_cast<int>(py.size()) - 1 ? 0.0 : sf[y]); };
  for (int z = 0; z < K; ++z) {
    double* row = out + static_cast<std::size_t>(z) * cols;
    for (int x = K - z; x < xend; ++x) {
      const double w = px[x];
      if (w == 0.0) continue;
      const int u = z + x;
      if (u >= full) {
        row[N] += w;
        continue;
      }
      for (int np = u / K; np <= N; ++np) row[np - 1] += w * (F(np * K + K - 1 - u) - F(np * K - 1 - u));
      row[N] += w * SF(full - u);
    }
  }
}

namespace {

void fill_kernel(double lambda_per_us, double width_us, int K, double* out) {
  const double mu = lambda_per_us * std::max(0.0, width_us);
  for (int d = 0; d < K; ++d) out[d] = poisson_pmf(d, mu);
}

// P(k worker arrivals during tau | phase q), k = 0..kcap where kcap collects the rest.
std::vector<double> count_table(double lambda_per_us, double tau_us, int K, int kcap) {
  const double mu = lambda_per_us * tau_us;
  const int xend = poisson_support_end(mu) + K;
  const auto px = poisson_pmf_range(xend, mu);
  std::vector<double> t(static_cast<std::size_t>(K) * (kcap + 1), 0.0);
  for (int q = 0; q < K; ++q)
    for (int x = 0; x < xend; ++x) t[q * (kcap + 1) + std::min((q + x) / K, kcap)] += px[x];
  return t;
}

}  // namespace

TransitionTables build_transition_tables(const MdpProblem& p) {
  TransitionTables t;
  t.K = p.K();
  t.N = p.N();
  t.J1 = p.J1();
  const int K = t.K, N = t.N, cols = t.cols(), S = 0;
  (void)S;
  const double slo = p.options.slo_us, lambda = p.lambda_per_us;
  const auto& T = p.grid_us;
  const int num_states = p.num_states();

  t.phase.assign(static_cast<std::size_t>(num_states) * K, 0.0);
#pragma omp parallel for schedule(static)
  for (int s = 0; s < num_states; ++s) {
    const int n = p.n_of(s);
    if (n == 0) continue;
    const double age = s == p.full_state() ? slo : slo - T[p.j_of(s)];
    phase_distribution(n, age, lambda, K, &t.phase[static_cast<std::size_t>(s) * K]);
  }

  const int B = t.buckets();
  t.pass.assign(static_cast<std::size_t>(B) * K * cols, 0.0);
  t.kernel.assign(static_cast<std::size_t>(B) * K, 0.0);
#pragma omp parallel for schedule(dynamic)
  for (int j = 0; j < B; ++j) {
    const double width = T[j + 1] - T[j];
    fill_pass_table(lambda, width, slo - T[j + 1], K, N, &t.pass[static_cast<std::size_t>(j) * K * cols]);
    fill_kernel(lambda, width, K, &t.kernel[static_cast<std::size_t>(j) * K]);
  }

  // Which taus need the whole-queue structure.
  const int num_taus = static_cast<int>(p.taus_us.size());
  std::vector<char> whole(num_taus, 0);
  for (const auto& a : p.actions)
    if (!a.partial()) whole[a.tau] = 1;
  t.tau_bucket.assign(num_taus, 0);
  t.tau_pass.assign(static_cast<std::size_t>(num_taus) * K * cols, 0.0);
  t.tau_kernel.assign(static_cast<std::size_t>(num_taus) * K, 0.0);
#pragma omp parallel for schedule(dynamic)
  for (int k = 0; k < num_taus; ++k) {
    if (!whole[k]) continue;
    const double tau = p.taus_us[k];
    // First bucket with an end after time 0: T_{j+1} > S - tau (bucket 0 at least).
    int jlo = 0;
    while (jlo + 1 < t.J1 - 1 && T[jlo + 1] <= slo - tau) ++jlo;
    t.tau_bucket[k] = jlo;
    const double end = std::min(tau, tau - slo + T[jlo + 1]);  // clip: tau - S + S may exceed tau
    fill_pass_table(lambda, end, slo - T[jlo + 1], K, N, &t.tau_pass[static_cast<std::size_t>(k) * K * cols]);
    fill_kernel(lambda, end, K, &t.tau_kernel[static_cast<std::size_t>(k) * K]);
  }

  // Partial actions (variable batching): P(k new queries), aggregated over the phase.
  t.count_begin.assign(p.actions.size() + 1, 0);
  std::vector<std::vector<double>> counts(num_taus);
  for (const auto& a : p.actions)
    if (a.partial() && counts[a.tau].empty()) counts[a.tau] = count_table(lambda, p.taus_us[a.tau], K, N + 1);
  std::size_t total = 0;
  for (int s = 0; s < num_states; ++s)
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
      t.count_begin[a] = total;
      if (p.actions[a].partial()) total += static_cast<std::size_t>(N + 2 - (p.n_of(s) - p.actions[a].batch));
    }
  t.count_begin[p.actions.size()] = total;
  t.count_prob.assign(total, 0.0);
#pragma omp parallel for schedule(dynamic, 16)
  for (int s = 0; s < num_states; ++s) {
    const double* ph = &t.phase[static_cast<std::size_t>(s) * K];
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
      const auto& act = p.actions[a];
      if (!act.partial()) continue;
      const int left = p.n_of(s) - act.batch;          // queries still queued
      const int len = N + 2 - left;                    // k = 0..N-left, then overflow
      double* out = &t.count_prob[t.count_begin[a]];
      const auto& c = counts[act.tau];
      for (int q = 0; q < K; ++q)
        for (int k = 0; k <= N + 1; ++k) out[std::min(k, len - 1)] += ph[q] * c[q * (N + 2) + k];
    }
  }
  return t;
}

}  // namespace lull::compiler
