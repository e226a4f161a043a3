#pragma once
// The factored transition structure of mdp-spec section 4 (see
// docs/architecture.md, "factored transitions"), one element per call: the
// CUDA executor calls these once per thread, the CPU executor once per loop
// index. The only implementation of these tables in lull.
//
// "Tables" are the shared buckets j = 0..B-1 followed by one clipped first
// bucket per service time tau (t = B + k); both kinds are pass/kernel tables
// of the same shape, stored back to back (pass: [t][z][col], kernel: [t][d]).
#include <cstddef>

#include "compiler/solver/factored/element_math.h"

namespace lull::compiler::factored {

// Width and remaining time of every table; the first bucket of each tau.
struct TableParams {
  Dims d;
  const double* grid_us;  // T_0..T_J
  const double* taus_us;
  const char* tau_whole;  // 1 when some whole-queue action uses tau
  double* width_us;       // [t]
  double* remaining_us;   // [t]
  char* active;           // [t]: 0 for taus only partial actions use (their tables stay zero)
  int* tau_bucket;        // [k]

  LULL_HD void operator()(std::size_t i) const {
    const int t = static_cast<int>(i);
    if (t < d.B) {
      width_us[t] = grid_us[t + 1] - grid_us[t];
      remaining_us[t] = d.slo_us - grid_us[t + 1];
      active[t] = 1;
      return;
    }
    const int k = t - d.B;
    tau_bucket[k] = 0;
    active[t] = tau_whole[k];
    if (!tau_whole[k]) return;
    const double tau = taus_us[k];
    // First bucket with an end after time 0: T_{j+1} > S - tau (bucket 0 at least).
    int jlo = 0;
    while (jlo + 1 < d.J1 - 1 && grid_us[jlo + 1] <= d.slo_us - tau) ++jlo;
    tau_bucket[k] = jlo;
    width_us[t] = min_hd(tau, tau - d.slo_us + grid_us[jlo + 1]);  // clip: tau - S + S may exceed tau
    remaining_us[t] = d.slo_us - grid_us[jlo + 1];
  }
};

// log(k!) = log_gamma(k + 1.0), k = 0..d.span-1: every Poisson pmf entry the
// tables need (counts below span) reads it instead of computing it.
struct LogFactorial {
  double* out;
  LULL_HD void operator()(std::size_t k) const { out[k] = log_gamma(static_cast<int>(k) + 1.0); }
};

// Per table: pmf of the arrivals in the bucket (px), and the CDF and survival
// function of the arrivals after it, as fill_pass_table builds them. Each row
// of px/cdf/sf has d.span entries. One sequential call per table:
// the prefix sums fix the summation order.
struct TablePmfs {
  Dims d;
  const double* width_us;
  const double* remaining_us;
  const char* active;
  double* px;
  double* cdf;
  double* sf;
  int* xend;                    // [t]: px has entries 0..xend-1
  int* ylen;                    // [t]: sf has entries 0..ylen-1
  const double* log_factorial;  // LogFactorial's d.span entries for Poisson counts, else nullptr

  LULL_HD void operator()(std::size_t i) const {
    const int t = static_cast<int>(i);
    xend[t] = 0;
    ylen[t] = 0;
    if (!active[t]) return;
    const std::size_t row = static_cast<std::size_t>(t) * d.span;
    const double mu_x = d.lambda_per_us * max_hd(0.0, width_us[t]);
    const double mu_y = d.lambda_per_us * max_hd(0.0, remaining_us[t]);
    const int full = (d.N + 1) * d.K;
    // Every index below stays inside the row (d.span entries) whatever the
    // latencies: dims_of sizes span for them, and this clamp holds if it did not.
    const int xe = min_int(d.support_end(mu_x), d.span);  // arrivals past `full` all count to F
    count_pmf_row(mu_x, d.dispersion, xe, px + row, log_factorial);
    const int yend = min_int(full + 1, d.span);
    const int yl = min_int(d.support_end(mu_y) > yend ? d.support_end(mu_y) : yend, d.span);
    count_pmf_row(mu_y, d.dispersion, yl, sf + row, log_factorial);  // py, turned into sf below
    double acc = 0;
    for (int y = 0; y < yend; ++y) {
      acc += sf[row + y];
      cdf[row + y] = acc;
    }
    double tail = 0;  // sf[y] = P(Y >= y), summed from the tail
    for (int y = yl - 1; y >= 0; --y) {
      tail += sf[row + y];
      sf[row + y] = tail;
    }
    xend[t] = xe;
    ylen[t] = yl;
  }
};

// pass[t][z][c]: first worker arrival in the table's bucket and c+1 arrivals
// in all (c = N: the queue overflows to F), given z central arrivals so far.
struct PassElement {
  Dims d;
  const double* px;
  const double* cdf;
  const double* sf;
  const int* xend;
  const int* ylen;
  double* pass;  // [t][z][col]

  LULL_HD void operator()(std::size_t i) const {
    const int cols = d.cols();
    const int t = static_cast<int>(i / d.pass_size());
    const int r = static_cast<int>(i % d.pass_size());
    const int z = r / cols, c = r % cols;
    const std::size_t row = static_cast<std::size_t>(t) * d.span;
    const int K = d.K, N = d.N, full = (N + 1) * K;
    const double* w = px + row;
    double acc = 0;
    // x counts the arrivals in the bucket, u = z + x of them since the
    // worker's last query; x < K - z leaves the worker without one (kernel).
    // The ranges below are where each CDF/survival lookup is inside its row
    // (ylen[t] > full), so the loops have no branches and vectorize.
    // (Terms with px = 0 add exactly 0.)
    if (c == N) {  // the queue overflows: u >= full, or Y >= full - u after the bucket
      const int split = full - z < xend[t] ? full - z : xend[t];
      for (int x = K - z; x < split; ++x) acc += w[x] * sf[row + (full - z - x)];
      for (int x = split > K - z ? split : K - z; x < xend[t]; ++x) acc += w[x];
    } else {  // n' = c + 1 in all: Y in [nK - u, nK + K - 1 - u]
      const int np = c + 1;
      // Counts with u / K > c + 1 add nothing to column c < N: stop there.
      const int xe = (c + 2) * K - z < xend[t] ? (c + 2) * K - z : xend[t];
      const int split = np * K - z < xe ? np * K - z : xe;  // from here np K - 1 - u < 0: F = 0
      for (int x = K - z; x < split; ++x) {
        const int u = z + x;
        acc += w[x] * (cdf[row + (np * K + K - 1 - u)] - cdf[row + (np * K - 1 - u)]);
      }
      for (int x = split > K - z ? split : K - z; x < xe; ++x) {
        const int u = z + x;
        acc += w[x] * (cdf[row + (np * K + K - 1 - u)] - 0.0);
      }
    }
    pass[i] = acc;
  }
};

// kernel[t][d]: P(d central arrivals during the table's bucket).
struct KernelElement {
  Dims d;
  const double* width_us;
  const char* active;
  double* kernel;  // [t][d]

  LULL_HD void operator()(std::size_t i) const {
    const int t = static_cast<int>(i / d.K), k = static_cast<int>(i % d.K);
    kernel[i] = active[t] ? d.pmf(k, d.lambda_per_us * max_hd(0.0, width_us[t])) : 0.0;
  }
};

// P(q), q = 0..K-1 (mdp-spec 4.1): the phase of a worker with n queued whose
// earliest query arrived age_us ago, for Poisson counts.
// log_factorial: LogFactorial's table (n K entries at least).
LULL_HD inline void phase_row(int n, double age_us, double lambda_per_us, int K, const double* log_factorial,
                              double* out) {
  const double mu = lambda_per_us * age_us;
  poisson_pmf_row((n - 1) * K, K, mu, log_factorial, out);
  bool any_zero = false;
  for (int q = 0; q < K; ++q) any_zero |= out[q] == 0.0;
  // The reference lifts every entry by the smallest subnormal when one has
  // underflowed, then normalizes. When all have underflowed that makes the
  // row uniform; otherwise the lift is below rounding for the live entries.
  // Spelled out here, because the solver flushes subnormals to zero.
  double sum = 0;
  for (int q = 0; q < K; ++q) sum += out[q];
  if (any_zero && !(sum >= kDoubleMinNormal)) {
    for (int q = 0; q < K; ++q) out[q] = 1.0 / K;
    return;
  }
  for (int q = 0; q < K; ++q) out[q] /= sum;
}

// The same for negative-binomial counts (dispersion D > 1, docs/solver.md):
// the earliest query's burst may have brought r more at the same instant, so
//   P(q) ~ sum_r w[r] p_mu((n-1)K + q - r),  w[r] = P(r later siblings).
// The pmf over the window m = (n-1)K + q - r is walked from its largest entry
// by the ratio p(m+1)/p(m) = (m + r') beta / (m + 1), r' = mu / (D - 1), scaled
// so that entry is 1 (the row is normalized anyway): nothing underflows that
// matters, so no uniform fallback is needed unless mu = 0 leaves nothing.
LULL_HD inline void phase_row_batch(int n, double age_us, double lambda_per_us, int K, double D, const double* w, int R,
                                    double* out) {
  const double mu = lambda_per_us * age_us;
  const int base = (n - 1) * K;
  for (int q = 0; q < K; ++q) out[q] = 0.0;
  if (mu <= 0) {  // p_0 = [m == 0]: only r = base + q
    for (int q = 0; q < K; ++q) out[q] = base + q < R ? w[base + q] : 0.0;
  } else {
    const int lo = base - (R - 1) > 0 ? base - (R - 1) : 0, hi = base + K - 1;
    const double rr = mu / (D - 1), beta = 1.0 - 1.0 / D;
    // Mode of the negative binomial, clamped into the window.
    int mode = rr > 1 ? static_cast<int>(floor((rr - 1) * (D - 1))) : 0;
    mode = mode < lo ? lo : mode > hi ? hi : mode;
    // Adds p(m) (scaled) to every out[q] whose window holds m.
    auto add = [&](int m, double v) {
      const int qlo = m - base > 0 ? m - base : 0;
      const int qhi = m - base + R - 1 < K - 1 ? m - base + R - 1 : K - 1;
      for (int q = qlo; q <= qhi; ++q) out[q] += v * w[base + q - m];
    };
    double v = 1.0;
    for (int m = mode; m <= hi; ++m) {
      add(m, v);
      v *= (m + rr) * beta / (m + 1.0);
    }
    v = 1.0;
    for (int m = mode; m > lo;) {
      v *= m / ((m - 1 + rr) * beta);
      --m;
      add(m, v);
    }
  }
  double sum = 0;
  for (int q = 0; q < K; ++q) sum += out[q];
  if (!(sum >= kDoubleMinNormal)) {
    for (int q = 0; q < K; ++q) out[q] = 1.0 / K;
    return;
  }
  for (int q = 0; q < K; ++q) out[q] /= sum;
}

// The idle state's phases z >= K (Dims::E > 0): its first query of the
// service is there at time 0 with floor(z / K) more, so with k arrivals in
// [0, tau) it holds n' = floor((z + k) / K) at the next decision, all in the
// tau's first bucket. idle_rows[k][c] mixes these over the idle row's
// weights of z = K..K+E-1 (c = N: the overflow to F), one tau per call:
// one row per tau instead of E, as the value and power steps only need the
// mixture.
struct IdleExtraRows {
  Dims d;
  const double* taus_us;
  const char* tau_whole;
  const double* idle_row;  // [z], z = 0..K+E-1
  double* cdf;             // [k][span] scratch: the CDF of k arrivals in [0, tau)
  double* idle_rows;       // [k][col]

  LULL_HD void operator()(std::size_t i) const {
    const int k = static_cast<int>(i), cols = d.cols(), K = d.K, N = d.N;
    double* out = idle_rows + static_cast<std::size_t>(k) * cols;
    for (int c = 0; c < cols; ++c) out[c] = 0.0;
    if (!tau_whole[k]) return;
    double* F = cdf + static_cast<std::size_t>(k) * d.span;
    const double mu = d.lambda_per_us * taus_us[k];
    const int len = min_int(d.support_end(mu), d.span);
    count_pmf_row(mu, d.dispersion, len, F);
    for (int x = 1; x < len; ++x) F[x] += F[x - 1];
    auto at = [&](int x) { return x < 0 ? 0.0 : F[x < len ? x : len - 1]; };
    for (int z = K; z < K + d.E; ++z) {
      const double w = idle_row[z];
      if (w == 0.0) continue;
      // n' = c + 1 <=> (c + 1) K - z <= k <= (c + 2) K - 1 - z.
      for (int c = 0; c < N; ++c) out[c] += w * (at((c + 2) * K - 1 - z) - at((c + 1) * K - 1 - z));
      out[N] += w * (at(len - 1) - at((N + 1) * K - 1 - z));
    }
  }
};

// The idle state's row over phases 0..K+E-1 (pipeline_layout.h,
// idle_phase_row) replaces its first K entries in phase[s][q].
struct SetIdlePhase {
  Dims d;
  const double* idle_row;
  double* phase;
  LULL_HD void operator()(std::size_t q) const { phase[static_cast<std::size_t>(d.idle()) * d.K + q] = idle_row[q]; }
};

// phase[s][q]; rows of n = 0 states stay zero.
struct PhaseRow {
  Dims d;
  const double* grid_us;
  const double* burst_residual;  // [r], d.residual_len entries
  const double* log_factorial;   // LogFactorial's table for Poisson counts
  double* phase;                 // [s][q]

  LULL_HD void operator()(std::size_t i) const {
    const int s = static_cast<int>(i), n = d.n_of(s);
    if (n == 0) return;
    const int j = d.j_of(s);
    const double low = grid_us[j], mid = d.age_mid_cell && j + 1 < d.J1 ? (low + grid_us[j + 1]) / 2 : low;
    const double age = s == d.full() ? d.slo_us : d.slo_us - mid;
    double* row = phase + static_cast<std::size_t>(s) * d.K;
    if (d.dispersion == 1.0)
      phase_row(n, age, d.lambda_per_us, d.K, log_factorial, row);
    else
      phase_row_batch(n, age, d.lambda_per_us, d.K, d.dispersion, burst_residual, d.residual_len, row);
  }
};

}  // namespace lull::compiler::factored
