// Mathematical checks of the factored solver (compiler/solver/factored, the
// one implementation of the transitions) that need no golden data: rows
// against the spec's literal sums and a hand-derived K = 1 case.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "compiler/mdp/arrival_counts.h"
#include "compiler/mdp/mdp_problem.h"
#include "compiler/mdp/poisson.h"
#include "compiler/solver/factored/pipeline_layout.h"
#include "compiler/solver/factored/table_elements.h"
#include "compiler/solver/solver.h"
#include "test/support/factored_probe.h"
#include "test/support/synthetic_profiles.h"

using namespace lull::compiler;
using factored::phase_row;
using lull::test::FactoredProbe;
using lull::test::linear_profiles;

namespace {

// log(k!), k < n: the table phase_row reads.
std::vector<double> log_factorials(int n) {
  std::vector<double> lf(n);
  for (int k = 0; k < n; ++k) lf[k] = log_gamma(k + 1.0);
  return lf;
}

// mdp-spec 4.2 taken literally: sum over the phase and over k_B, k_C, k_D.
double literal_probability(const MdpProblem& p, int s, double tau, int n_next, int j_next) {
  const int K = p.K(), N = p.N(), J = p.J1() - 1;
  const double S = p.options.slo_us, lam = p.lambda_per_us;
  const auto& T = p.grid_us;
  std::vector<double> phase(K);
  const double age = s == p.full_state() ? S : S - T[p.j_of(s)];
  phase_row(p.n_of(s), age, lam, K, log_factorials(p.n_of(s) * K).data(), phase.data());
  const int cap = (N + 1) * K + 40;
  double total = 0;
  for (int q = 0; q < K; ++q) {
    double pq = 0;
    if (n_next == 0) {
      for (int k = 0; k <= K - 1 - q; ++k) pq += poisson_pmf(k, lam * tau);
    } else {
      const double b = j_next == 0 ? 0.0 : std::max(0.0, tau - S + T[j_next]);
      const double c =
          j_next == J ? tau : std::min(tau, std::max(0.0, tau - S + (j_next + 1 <= J ? T[j_next + 1] : S)));
      for (int kb = 0; kb <= K - q - 1; ++kb)
        for (int kc = std::max(0, K - q - kb); kc <= cap; ++kc) {
          const double pbc = poisson_pmf(kb, lam * b) * poisson_pmf(kc, lam * (c - b));
          if (pbc < 1e-300) continue;
          for (int kd = 0; kd <= cap; ++kd) {
            const int total_k = q + kb + kc + kd;
            if (total_k > n_next * K + K - 1) break;
            if (total_k >= n_next * K) pq += pbc * poisson_pmf(kd, lam * (tau - c));
          }
        }
    }
    total += phase[q] * pq;
  }
  return total;
}

// The factored row of (s, a) against the literal formula, entry by entry.
void check_row_against_literal(const MdpProblem& p, FactoredProbe& probe, int s, int a) {
  const double tau = p.taus_us[p.actions[a].tau];
  const auto row = probe.raw_row(s, a);
  double rest = 0;
  for (int np = 1; np <= p.N(); ++np)
    for (int jp = 0; jp < p.J1(); ++jp) {
      const double lit = literal_probability(p, s, tau, np, jp);
      rest += lit;
      if (np == 1 && jp == p.J1() - 1) continue;  // shares its state with n' = 0, checked below
      INFO("state " << s << " tau " << tau << " -> (" << np << "," << jp << ")");
      CHECK(row[p.state(np, jp)] == Approx(lit).margin(1e-13));
    }
  const double idle = literal_probability(p, s, tau, 0, 0);
  CHECK(row[p.state(1, p.J1() - 1)] == Approx(idle + literal_probability(p, s, tau, 1, p.J1() - 1)).margin(1e-13));
  CHECK(row[p.full_state()] == Approx(std::max(0.0, 1 - rest - idle)).margin(1e-12));
}

}  // namespace

TEST_CASE("every transition row sums to 1 without renormalization", "[compiler][math]") {
  const auto prof = linear_profiles({{0.6, 4}, {0.7, 9}, {0.8, 20}}, 8, 2.0);
  for (int K : {1, 3, 7}) {
    for (double load : {30.0, 300.0, 3000.0}) {
      MdpOptions o = lull::test::mdp_options(60000, K, load, 8, 12);
      for (auto batching : {Batching::kMaximal, Batching::kVariable}) {
        o.batching = batching;
        const auto p = build_mdp_problem(prof, o);
        FactoredProbe probe(p);
        for (int s = p.state(1, 0); s < p.num_states(); ++s)
          for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
            const auto row = probe.raw_row(s, a);
            double sum = 0;
            for (double v : row) {
              REQUIRE(v >= 0);
              sum += v;
            }
            INFO("K=" << K << " load=" << load << " state " << s << " action " << a);
            REQUIRE(std::fabs(sum - 1.0) < 1e-9);
          }
      }
    }
  }
}

TEST_CASE("K = 1, one model, tiny grid: transitions match the hand-derived formula", "[compiler][math]") {
  // One worker sees every arrival. After a service of tau from (1, j), the
  // first arrival falls in bucket j' with probability
  //   e^{-lam b} * sum_{kc>=1} Pois(kc; lam |C|) Pois(n' - kc; lam |D|)
  // and no arrival at all (-> (1, J)) with probability e^{-lam tau}.
  const auto prof = linear_profiles({{0.7, 3}}, 3, 1.0);
  MdpOptions o = lull::test::mdp_options(10000, 1, 200, 3, 4);
  const auto p = build_mdp_problem(prof, o);
  FactoredProbe probe(p);
  const int J = 4, s = p.state(1, J);
  REQUIRE(p.num_actions(s) == 1);
  const int a = p.action_begin[s];
  const double tau = 3000, lam = 200e-6, S = 10000;
  const auto row = probe.raw_row(s, a);
  const double T[] = {0, 2500, 5000, 7500, 10000, 10000};
  auto pois = [](int k, double mu) { return std::exp(-mu) * std::pow(mu, k) / std::tgamma(k + 1.0); };
  double sum_checked = 0;
  for (int np = 1; np <= 3; ++np)
    for (int jp = 0; jp < J; ++jp) {  // bucket J is empty: T_J = S
      const double b = jp == 0 ? 0 : std::max(0.0, tau - S + T[jp]);
      const double c = jp == J ? tau : std::max(0.0, tau - S + T[jp + 1]);
      double expect = 0;
      for (int kc = 1; kc <= np; ++kc) expect += pois(kc, lam * (c - b)) * pois(np - kc, lam * (tau - c));
      expect *= std::exp(-lam * b);
      INFO("n'=" << np << " j'=" << jp);
      CHECK(row[p.state(np, jp)] == Approx(expect).margin(1e-15).epsilon(1e-12));
      sum_checked += expect;
    }
  CHECK(row[s] == Approx(std::exp(-lam * tau)).epsilon(1e-12));  // n' = 0 -> (1, J)
  for (int np = 2; np <= 3; ++np) CHECK(row[p.state(np, J)] == 0.0);
  CHECK(row[p.full_state()] == Approx(1 - std::exp(-lam * tau) - sum_checked).margin(1e-14));
  // Only the buckets the first arrival can reach get mass: slack after tau is >= S - tau = 7 ms.
  for (int np = 1; np <= 3; ++np) CHECK(row[p.state(np, 0)] == 0.0);
}

TEST_CASE("factored rows equal the spec's literal B/C/D formula (K = 3)", "[compiler][math]") {
  const auto prof = linear_profiles({{0.6, 4}, {0.75, 11}}, 4, 3.0);
  MdpOptions o = lull::test::mdp_options(40000, 3, 400, 4, 8);
  const auto p = build_mdp_problem(prof, o);
  FactoredProbe probe(p);
  for (int s : {p.state(1, 8), p.state(2, 5), p.state(3, 7), p.state(4, 2), p.full_state()})
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) check_row_against_literal(p, probe, s, a);
}

TEST_CASE("poisson_pmf_row and count_pmf_row with the log(k!) table: poisson_pmf's bits", "[compiler][math]") {
  const std::vector<double> lf = log_factorials(4000);
  std::vector<double> row(4000), counts(4000);
  for (double mu : {0.0, 1e-300, 0.37, 3.0, 59.5, 812.25, 2999.0})
    for (int first : {0, 1, 17, 600}) {
      const int len = 4000 - first;
      poisson_pmf_row(first, len, mu, lf.data(), row.data());
      int differ = 0;
      for (int k = 0; k < len; ++k) {
        const double expect = poisson_pmf(first + k, mu);
        differ += std::memcmp(&row[k], &expect, sizeof(double)) != 0;
      }
      INFO("mu = " << mu << ", first = " << first);
      CHECK(differ == 0);
    }
  for (double mu : {0.0, 0.37, 59.5, 812.25}) {
    count_pmf_row(mu, 1.0, 4000, counts.data(), lf.data());
    int differ = 0;
    for (int k = 0; k < 4000; ++k) {
      const double expect = poisson_pmf(k, mu);
      differ += std::memcmp(&counts[k], &expect, sizeof(double)) != 0;
    }
    INFO("mu = " << mu);
    CHECK(differ == 0);
  }
}

TEST_CASE("phase distribution matches a Monte-Carlo estimate", "[compiler][math]") {
  // Conditioning of mdp-spec 4.1: Poisson central arrivals over a window of
  // length a after the worker's own query, round-robin over K workers, kept
  // when the worker received exactly n - 1 more; phase = arrivals since its last.
  const std::uint64_t seed = 20261121;
  std::mt19937_64 rng(seed);
  const int K = 5, n = 3;
  const double lam = 0.002, a = 5000;  // mean 10 central arrivals
  std::vector<double> expect(K);
  phase_row(n, a, lam, K, log_factorials(n * K).data(), expect.data());
  std::vector<double> hist(K, 0.0);
  std::exponential_distribution<double> gap(lam);
  int kept = 0;
  for (int trial = 0; trial < 400000; ++trial) {
    int c = 0;
    for (double t = gap(rng); t < a; t += gap(rng)) ++c;
    if (c / K != n - 1) continue;
    ++kept;
    hist[c - (n - 1) * K] += 1;
  }
  INFO("seed " << seed << ", kept " << kept);
  REQUIRE(kept > 50000);
  for (int q = 0; q < K; ++q) CHECK(hist[q] / kept == Approx(expect[q]).margin(0.006));
}

TEST_CASE("a policy that always picks model 0 has expected accuracy acc(0)", "[compiler][math]") {
  const auto prof = linear_profiles({{0.55, 3}, {0.7, 8}, {0.9, 15}}, 6, 1.5);
  MdpOptions o = lull::test::mdp_options(50000, 4, 600, 6, 20);
  const auto p = build_mdp_problem(prof, o);
  FactoredProbe probe(p);
  std::vector<int> choice(p.num_states(), -1);
  for (int s = p.state(1, 0); s < p.num_states(); ++s)
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a)
      if (p.actions[a].model == 0 && p.actions[a].batch == p.n_of(s)) choice[s] = a;
  for (int s = p.state(1, 0); s < p.num_states(); ++s) REQUIRE(choice[s] >= 0);
  const SolverOutput out = probe.stationary(choice, 1000);
  CHECK(out.stationary_steps == 1000);
  SolverOutput again = out;  // the solver's expectations, recomputed from the distribution alone
  fill_expectations(p, again);
  CHECK(again.expected_accuracy == out.expected_accuracy);
  CHECK(again.expected_violation_rate == out.expected_violation_rate);
  CHECK(out.expected_accuracy == Approx(0.55).epsilon(1e-14));
  CHECK(out.expected_violation_rate >= 0);
}

TEST_CASE("the solver's policy is at least as good as always-fastest", "[compiler][math]") {
  const auto prof = linear_profiles({{0.55, 3}, {0.7, 8}, {0.9, 15}}, 6, 1.5);
  MdpOptions o = lull::test::mdp_options(50000, 4, 300, 6, 20);
  const auto out = make_cpu_solver()->solve(build_mdp_problem(prof, o), {});
  CHECK(out.expected_accuracy > 0.55);
  CHECK(out.expected_accuracy <= 0.9);
  CHECK(out.expected_violation_rate < 0.01);
}

TEST_CASE("a fallback slower than the SLO (service time > S): rows equal the literal formula", "[compiler][math]") {
  // Model 0 at batch 8 takes 8000 + 3000 * 8 = 32 ms > 25 ms: the fallback misses for sure.
  MdpOptions o = lull::test::mdp_options(25000, 3, 300, 8, 10);
  const auto p = build_mdp_problem(lull::test::linear_models(2, 8), o);
  REQUIRE(p.taus_us.back() > o.slo_us);
  FactoredProbe probe(p);
  int slower_than_slo = 0;
  for (int s : {p.state(8, 0), p.state(8, 10), p.full_state()})
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
      slower_than_slo += p.taus_us[p.actions[a].tau] > o.slo_us;
      check_row_against_literal(p, probe, s, a);
    }
  CHECK(slower_than_slo > 0);
  const auto out = make_cpu_solver()->solve(p, {});
  CHECK(out.expected_accuracy >= 0.6);
  CHECK(out.expected_accuracy <= 0.85);
}

TEST_CASE("batch bursts past a round of K workers: the idle state's extra phases, against the literal sum",
          "[compiler][math][arrivals]") {
  // K = 2, batch:6: a burst often brings an idle worker more of its own
  // queries at time 0 (phases z >= K). The idle state's row is the mixture
  // over its phase row (idle_phase_row) of, for z < K, mdp-spec 4.2 with
  // negative-binomial counts and, for z >= K, the first query at time 0
  // (slack S - tau at the next decision) and n' = floor((z + k) / K) in all,
  // k the counts over [0, tau).
  const auto prof = linear_profiles({{0.6, 4}, {0.75, 11}}, 4, 3.0);
  MdpOptions o = lull::test::mdp_options(40000, 2, 150, 4, 8);
  o.arrivals = lull::ArrivalProcess::batch(6);
  const auto p = build_mdp_problem(prof, o);
  FactoredProbe probe(p);
  const auto& t = probe.tables();
  const int K = p.K(), N = p.N(), J = p.J1() - 1, s = p.state(1, J);
  REQUIRE(t.d.E > 0);
  const std::vector<double> z_row = factored::idle_phase_row(p, t.d);
  REQUIRE(static_cast<int>(z_row.size()) == K + t.d.E);
  const double D = p.arrivals.dispersion, lam = p.lambda_per_us, S = p.options.slo_us;
  const auto& T = p.grid_us;
  auto pmf = [&](int k, double len) { return count_pmf(k, lam * std::max(0.0, len), D); };
  const int cap = (N + 1) * K + 400;
  for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
    const double tau = p.taus_us[p.actions[a].tau];
    std::vector<double> want(p.num_states(), 0.0);
    for (int z = 0; z < static_cast<int>(z_row.size()); ++z) {
      if (z >= K) {  // slack of the time-0 query after tau
        int j0 = 0;
        while (j0 + 1 < J && T[j0 + 1] <= S - tau) ++j0;
        for (int k = 0; k <= cap; ++k) {
          const int np = (z + k) / K;
          want[np > N ? p.full_state() : p.state(np, j0)] += z_row[z] * pmf(k, tau);
        }
        continue;
      }
      for (int k = 0; k <= K - 1 - z; ++k) want[s] += z_row[z] * pmf(k, tau);  // n' = 0: idle again
      for (int jp = 0; jp < J; ++jp) {                                         // bucket J is empty: T_J = S
        const double b = jp == 0 ? 0.0 : std::max(0.0, tau - S + T[jp]);
        const double c = std::min(tau, std::max(0.0, tau - S + T[jp + 1]));
        for (int kb = 0; kb <= K - z - 1; ++kb)
          for (int kc = std::max(0, K - z - kb); kc <= cap; ++kc) {
            const double pbc = pmf(kb, b) * pmf(kc, c - b);
            if (pbc < 1e-300) continue;
            for (int kd = 0; kd <= cap; ++kd) {
              const int np = (z + kb + kc + kd) / K;
              want[np > N ? p.full_state() : p.state(np, jp)] += z_row[z] * pbc * pmf(kd, tau - c);
            }
          }
      }
    }
    const auto row = probe.raw_row(s, a);
    double sum = 0;
    for (int u = 0; u < p.num_states(); ++u) {
      INFO("tau " << tau << " -> state " << u);
      CHECK(row[u] == Approx(want[u]).margin(1e-10));
      sum += row[u];
    }
    CHECK(sum == Approx(1.0).margin(1e-9));
  }
}
