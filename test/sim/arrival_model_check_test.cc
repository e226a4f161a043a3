// Checks docs/solver.md's claims against the simulator's sampler
// (runtime/sim/arrivals.h, the one lull simulate and lull loadgen use): the
// per-worker arrival counts the compiler's model predicts
// (compiler/mdp/arrival_model.h, arrival_counts.h) against counts of sampled
// arrivals dealt round-robin, in windows of fixed length. Exact cases must
// agree to sampling noise; the approximate ones are measured and bounded.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "compiler/mdp/arrival_counts.h"
#include "compiler/mdp/arrival_model.h"
#include "compiler/solver/factored/table_elements.h"
#include "runtime/sim/arrivals.h"

using lull::ArrivalProcess;
using namespace lull::compiler;

namespace {

constexpr double kWindowUs = 20000;  // 20 ms: a few queries per worker at the loads below

// Histogram (as a distribution) of worker 0's arrivals per window, from a run
// of `seconds` of `process` at `qps` dealt round-robin over K workers.
std::vector<double> sampled_worker_counts(const ArrivalProcess& process, double qps, int K, double seconds,
                                          std::uint64_t seed) {
  lull::sim::RateArrivals source({{0, seconds, qps}}, process, seed);
  const int windows = static_cast<int>(seconds * 1e6 / kWindowUs);
  std::vector<int> per_window(windows, 0);
  std::int64_t t = 0;
  for (long i = 0; source.next(&t); ++i) {
    if (i % K != 0) continue;
    const int w = static_cast<int>(static_cast<double>(t) / kWindowUs);
    if (w < windows) ++per_window[w];
  }
  std::vector<double> dist;
  for (int c : per_window) {
    if (c >= static_cast<int>(dist.size())) dist.resize(c + 1, 0.0);
    dist[c] += 1.0 / windows;
  }
  return dist;
}

// The model's distribution of a worker's arrivals in a window: the worker gets
// every K'-th event of the counting stream, its phase uniform at a fixed time.
std::vector<double> model_worker_counts(const ArrivalModel& m, int len) {
  const double mu = m.rate_per_us * kWindowUs;
  const int xend = count_support_end(mu, m.dispersion) + m.phases;
  std::vector<double> out(len, 0.0);
  for (int q = 0; q < m.phases; ++q)
    for (int x = 0; x < xend; ++x) {
      const int n = (q + x) / m.phases;
      if (n < len) out[n] += count_pmf(x, mu, m.dispersion) / m.phases;
    }
  return out;
}

double total_variation(std::vector<double> a, std::vector<double> b) {
  const std::size_t n = std::max(a.size(), b.size());
  a.resize(n, 0.0);
  b.resize(n, 0.0);
  double tv = 0;
  for (std::size_t i = 0; i < n; ++i) tv += std::fabs(a[i] - b[i]);
  return tv / 2;
}

double worker_count_tv(const ArrivalProcess& process, double qps, int K) {
  const auto sampled = sampled_worker_counts(process, qps, K, 600, 17);
  const auto model = model_worker_counts(arrival_model(process, K, qps), static_cast<int>(sampled.size()) + 20);
  return total_variation(sampled, model);
}

}  // namespace

TEST_CASE("negative-binomial counts: a distribution with mean mu and variance D mu, and D = 1 is Poisson bit for bit",
          "[arrivals][model]") {
  for (double D : {1.5, 4.0, 8.0})
    for (double mu : {0.3, 7.0, 120.0}) {
      const int len = count_support_end(mu, D);
      std::vector<double> row(len);
      count_pmf_row(mu, D, len, row.data());
      double s = 0, m1 = 0, m2 = 0;
      for (int k = 0; k < len; ++k) {
        CHECK(row[k] == Approx(negbin_pmf(k, mu, D)).epsilon(1e-9).margin(1e-300));
        s += row[k];
        m1 += k * row[k];
        m2 += double(k) * k * row[k];
      }
      CHECK(s == Approx(1).epsilon(1e-12));
      CHECK(m1 == Approx(mu).epsilon(1e-9));
      CHECK(m2 - m1 * m1 == Approx(D * mu).epsilon(1e-8));
    }
  std::vector<double> row(80);
  count_pmf_row(31.5, 1.0, 80, row.data());
  for (int k = 0; k < 80; ++k) CHECK(row[k] == poisson_pmf(k, 31.5));
}

TEST_CASE("burst residual: P(r later siblings) sums to 1 and matches sampled bursts", "[arrivals][model]") {
  const double D = 4;
  const auto w = burst_residual(D);
  double s = 0;
  for (double x : w) s += x;
  CHECK(s == Approx(1).epsilon(1e-12));
  // Sampled: for each query, how many of its burst come after it.
  lull::sim::RateArrivals source({{0, 200, 1000}}, ArrivalProcess::batch(D), 5);
  std::vector<std::int64_t> t;
  for (std::int64_t x = 0; source.next(&x);) t.push_back(x);
  std::vector<double> hist(w.size() + 50, 0.0);
  for (std::size_t i = 0; i < t.size();) {
    std::size_t j = i;
    while (j < t.size() && t[j] == t[i]) ++j;
    for (std::size_t k = i; k < j; ++k) hist[std::min(hist.size() - 1, j - 1 - k)] += 1.0 / t.size();
    i = j;
  }
  CHECK(total_variation(hist, w) < 0.01);
}

TEST_CASE("gamma with K/CV2 whole: the worker's counts are those of every K/CV2-th Poisson event (exact)",
          "[arrivals][model]") {
  for (auto [K, c] : {std::pair{12, 4.0}, std::pair{4, 2.0}, std::pair{8, 8.0}}) {
    const ArrivalModel m = arrival_model(ArrivalProcess::gamma(c), K, 1000);
    CHECK(m.exact);
    CHECK(m.phases == static_cast<int>(K / c));
    const double tv = worker_count_tv(ArrivalProcess::gamma(c), 1000, K);
    INFO("K " << K << " gamma:" << c << " total variation " << tv);
    CHECK(tv < 0.015);
  }
}

TEST_CASE("batch arrivals: negative-binomial counts per worker under round-robin (exact)", "[arrivals][model]") {
  for (auto [K, D] : {std::pair{1, 4.0}, std::pair{4, 4.0}, std::pair{20, 8.0}}) {
    const double tv = worker_count_tv(ArrivalProcess::batch(D), 1000, K);
    INFO("K " << K << " batch:" << D << " total variation " << tv);
    CHECK(tv < 0.02);  // K = 1: ~60 count values, sampling noise ~0.015
  }
}

TEST_CASE("gamma with K/CV2 not whole: the approximation's count error is small and measured", "[arrivals][model]") {
  // (K, CV2): K/CV2 = 2.5, 6.67, 1.33 (rounded up), and CV2 > K.
  for (auto [K, c] : {std::pair{10, 4.0}, std::pair{20, 3.0}, std::pair{4, 3.0}, std::pair{4, 8.0}}) {
    const ArrivalModel m = arrival_model(ArrivalProcess::gamma(c), K, 1000);
    CHECK_FALSE(m.exact);
    const double tv = worker_count_tv(ArrivalProcess::gamma(c), 1000, K);
    WARN("K " << K << " gamma:" << c << " (" << m.phases << " phases, dispersion " << m.dispersion
              << "): total variation of 20 ms worker counts " << tv);
    CHECK(tv < 0.06);
  }
}

TEST_CASE("phase prior under bursts: the factored element equals the note's sum over burst siblings",
          "[arrivals][model]") {
  const double D = 3, lam = 0.002;  // per us
  const auto w = burst_residual(D);
  const int K = 5, R = static_cast<int>(w.size());
  for (int n : {1, 2, 6})
    for (double age : {0.0, 900.0, 20000.0}) {
      std::vector<double> got(K), want(K, 0.0);
      lull::compiler::factored::phase_row_batch(n, age, lam, K, D, w.data(), R, got.data());
      double s = 0;
      for (int q = 0; q < K; ++q) {
        for (int r = 0; r < R; ++r) want[q] += w[r] * negbin_pmf((n - 1) * K + q - r, lam * age, D);
        s += want[q];
      }
      for (int q = 0; q < K; ++q) CHECK(got[q] == Approx(want[q] / s).epsilon(1e-9).margin(1e-15));
    }
}

TEST_CASE("batch arrivals: an idle worker's later siblings of its burst match idle_burst_residual",
          "[arrivals][model]") {
  // At a load where bursts rarely overlap a busy worker, each worker's first
  // query of every burst is where it starts a service from idle; the later
  // siblings of that burst (all of them, whichever worker they go to) are
  // the idle state's phase. The typical query's count (burst_residual) is a
  // different distribution: the check can tell them apart.
  for (auto [K, D] : {std::pair{4, 8.0}, std::pair{2, 4.0}, std::pair{20, 8.0}}) {
    lull::sim::RateArrivals source({{0, 2000, 50}}, ArrivalProcess::batch(D), 23);
    std::vector<double> sampled;
    std::vector<std::int64_t> burst;  // worker of each query of the current burst
    std::int64_t t = 0, burst_t = -1;
    long next_worker = 0, count = 0;
    auto flush = [&] {
      std::vector<char> seen(K, 0);
      for (std::size_t i = 0; i < burst.size(); ++i) {
        if (seen[burst[i]]) continue;
        seen[burst[i]] = 1;
        const std::size_t r = burst.size() - 1 - i;
        if (r >= sampled.size()) sampled.resize(r + 1, 0.0);
        sampled[r] += 1;
        ++count;
      }
      burst.clear();
    };
    while (source.next(&t)) {
      if (t != burst_t) flush();
      burst_t = t;
      burst.push_back(next_worker++ % K);
    }
    flush();
    for (double& x : sampled) x /= count;
    const auto model = idle_burst_residual(D, K);
    const double tv = total_variation(sampled, model), tv_typical = total_variation(burst_residual(D), model);
    WARN("K " << K << " batch:" << D << ": idle sibling count, TV sampled vs model " << tv << " (" << count
              << " idle starts); typical query's count vs model " << tv_typical);
    CHECK(tv < 0.015);
    if (K < 20) CHECK(tv_typical > 3 * tv);
  }
}
