#include "compiler/solver/factored_operator.h"

#include <Eigen/Core>
#include <algorithm>

namespace lull::compiler {
namespace {
// Eigen serves the forward (stationary) pass, where summation order does not
// matter. The value-iteration sums are plain sequential loops on purpose: the
// CUDA backend reproduces them in the same order, so near-ties between
// actions break the same way on both.
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMatrix>;
using ConstVecMap = Eigen::Map<const Eigen::VectorXd>;
using VecMap = Eigen::Map<Eigen::VectorXd>;
}  // namespace

FactoredOperator::FactoredOperator(const MdpProblem& problem, const TransitionTables& tables)
    : p_(problem), t_(tables) {
  fv_.assign(static_cast<std::size_t>(t_.buckets()) * t_.K, 0.0);
  bk_.assign(static_cast<std::size_t>(t_.J1) * t_.K, 0.0);
  alive_.assign(static_cast<std::size_t>(t_.J1) * t_.K, 0.0);
  mass_.assign(p_.taus_us.size() * static_cast<std::size_t>(t_.K), 0.0);
  // Taus grouped by their first bucket: the forward step writes each group's
  // targets only, so groups can run in parallel without atomics.
  jlo_groups_.assign(static_cast<std::size_t>(t_.J1), {});
  for (int k = 0; k < static_cast<int>(p_.taus_us.size()); ++k) jlo_groups_[t_.tau_bucket[k]].push_back(k);
  // Multiply-adds per value-iteration step: the bucket and tau tables, the
  // Q values of whole-queue actions (K each) and of partial actions (their
  // count distributions).
  const double work = static_cast<double>(t_.K) * (p_.taus_us.size() + t_.J1) * t_.cols() +
                      static_cast<double>(t_.K) * p_.actions.size() + static_cast<double>(t_.count_prob.size());
  parallel_ = work > 1e7;  // ~10 ms of work per iteration; below that, waking threads costs more
}

double FactoredOperator::next_value(int n, int j, const std::vector<double>& V) const {
  return n > p_.N() ? V[p_.full_state()] : V[p_.state(n, j)];
}

void FactoredOperator::expected_next_values(const std::vector<double>& V, std::vector<double>& U) {
  const int K = t_.K, N = t_.N, cols = t_.cols(), B = t_.buckets(), J = t_.J1 - 1;
  const int num_taus = static_cast<int>(p_.taus_us.size());
  U.assign(static_cast<std::size_t>(num_taus) * K, 0.0);
  const double vF = V[p_.full_state()];
  // Values of the columns of bucket j: n' = 1..N then F.
  auto col_values = [&](int j, double* out) {
    for (int c = 0; c < N; ++c) out[c] = V[p_.state(c + 1, j)];
    out[N] = vF;
  };
#pragma omp parallel if (parallel_)
  {
    std::vector<double> cv(static_cast<std::size_t>(cols));
#pragma omp for schedule(static)
    for (int j = 0; j < B; ++j) {
      col_values(j, cv.data());
      const double* pass = &t_.pass[static_cast<std::size_t>(j) * K * cols];
      for (int z = 0; z < K; ++z) {
        double s = 0;
        for (int c = 0; c < cols; ++c) s += pass[z * cols + c] * cv[c];
        fv_[static_cast<std::size_t>(j) * K + z] = s;
      }
    }
#pragma omp single
    {
      // Backward over buckets: value of "no worker arrival yet, z counted" at each bucket start.
      const double idle = V[p_.state(1, J)];
      std::fill(bk_.begin() + static_cast<std::ptrdiff_t>(J) * K, bk_.begin() + static_cast<std::ptrdiff_t>(J + 1) * K, idle);
      for (int j = J - 1; j >= 0; --j) {
        const double* ker = &t_.kernel[static_cast<std::size_t>(j) * K];
        const double* next = &bk_[static_cast<std::size_t>(j + 1) * K];
        double* cur = &bk_[static_cast<std::size_t>(j) * K];
        for (int z = 0; z < K; ++z) {
          double s = fv_[static_cast<std::size_t>(j) * K + z];
          for (int z2 = z; z2 < K; ++z2) s += ker[z2 - z] * next[z2];
          cur[z] = s;
        }
      }
    }
#pragma omp for schedule(dynamic, 4)
    for (int k = 0; k < num_taus; ++k) {
      const int jlo = t_.tau_bucket[k];
      col_values(jlo, cv.data());
      const double* pass = &t_.tau_pass[static_cast<std::size_t>(k) * K * cols];
      const double* ker = &t_.tau_kernel[static_cast<std::size_t>(k) * K];
      const double* next = &bk_[static_cast<std::size_t>(jlo + 1) * K];
      double* u = &U[static_cast<std::size_t>(k) * K];
      for (int q = 0; q < K; ++q) {
        double s = 0;
        for (int c = 0; c < cols; ++c) s += pass[q * cols + c] * cv[c];
        for (int z2 = q; z2 < K; ++z2) s += ker[z2 - q] * next[z2];
        u[q] = s;
      }
    }
  }
}

double FactoredOperator::q_value(int s, int a, const std::vector<double>& V, const std::vector<double>& U) const {
  const auto& act = p_.actions[a];
  const int K = t_.K;
  double s_next = 0;
  if (act.partial()) {
    const int left = p_.n_of(s) - act.batch;
    const double* prob = &t_.count_prob[t_.count_begin[a]];
    const int len = static_cast<int>(t_.count_begin[a + 1] - t_.count_begin[a]);
    for (int k = 0; k < len; ++k) s_next += prob[k] * next_value(left + k, act.next_j, V);
  } else {
    const double* ph = &t_.phase[static_cast<std::size_t>(s) * K];
    const double* u = &U[static_cast<std::size_t>(act.tau) * K];
    for (int q = 0; q < K; ++q) s_next += ph[q] * u[q];
  }
  return act.reward + s_next;
}

void FactoredOperator::step_distribution(const std::vector<int>& choice, const std::vector<double>& p,
                                         std::vector<double>& p_next, bool normalize) {
  const int K = t_.K, N = t_.N, cols = t_.cols(), B = t_.buckets(), J = t_.J1 - 1;
  p_next.assign(p.size(), 0.0);
  std::fill(mass_.begin(), mass_.end(), 0.0);
  std::fill(alive_.begin(), alive_.end(), 0.0);
  auto col_state = [&](int j, int c) { return c < N ? p_.state(c + 1, j) : p_.full_state(); };
  const int idle_state = p_.state(1, J);

  // Phase-weighted mass per service time; partial actions go straight to their targets.
  for (int s = 0; s < static_cast<int>(p.size()); ++s) {
    const double ps = p[s];
    if (ps == 0.0) continue;
    if (choice[s] < 0) {
      p_next[idle_state] += ps;
      continue;
    }
    const auto& act = p_.actions[choice[s]];
    if (act.partial()) {
      const int left = p_.n_of(s) - act.batch;
      const double* prob = &t_.count_prob[t_.count_begin[choice[s]]];
      const int len = static_cast<int>(t_.count_begin[choice[s] + 1] - t_.count_begin[choice[s]]);
      for (int k = 0; k < len; ++k)
        p_next[left + k > N ? p_.full_state() : p_.state(left + k, act.next_j)] += ps * prob[k];
      continue;
    }
    const double* ph = &t_.phase[static_cast<std::size_t>(s) * K];
    double* m = &mass_[static_cast<std::size_t>(act.tau) * K];
    for (int q = 0; q < K; ++q) m[q] += ps * ph[q];
  }

  // Clipped first buckets, one group of taus per first bucket.
#pragma omp parallel for schedule(dynamic) if (parallel_)
  for (int jlo = 0; jlo < t_.J1; ++jlo) {
    Eigen::VectorXd add_cols = Eigen::VectorXd::Zero(cols);
    double* alive_next = &alive_[static_cast<std::size_t>(std::min(jlo + 1, J)) * K];
    bool any = false;
    for (int k : jlo_groups_[jlo]) {
      const double* m = &mass_[static_cast<std::size_t>(k) * K];
      const double* pass = &t_.tau_pass[static_cast<std::size_t>(k) * K * cols];
      const double* ker = &t_.tau_kernel[static_cast<std::size_t>(k) * K];
      const ConstVecMap mass(m, K);
      if (mass.isZero(0.0)) continue;
      any = true;
      add_cols.noalias() += ConstRowMap(pass, K, cols).transpose() * mass;
      for (int q = 0; q < K; ++q)
        if (m[q] != 0.0) VecMap(alive_next + q, K - q) += m[q] * ConstVecMap(ker, K - q);
    }
    if (any)
      for (int c = 0; c < N; ++c) p_next[col_state(jlo, c)] += add_cols[c];
    if (any) {
#pragma omp atomic
      p_next[p_.full_state()] += add_cols[N];
    }
  }

  // Forward over the shared buckets.
  for (int j = 0; j < B; ++j) {
    const double* al = &alive_[static_cast<std::size_t>(j) * K];
    const double* pass = &t_.pass[static_cast<std::size_t>(j) * K * cols];
    const double* ker = &t_.kernel[static_cast<std::size_t>(j) * K];
    double* nxt = &alive_[static_cast<std::size_t>(j + 1) * K];
    const ConstVecMap alive(al, K);
    if (alive.isZero(0.0)) continue;
    const Eigen::VectorXd passed = ConstRowMap(pass, K, cols).transpose() * alive;
    for (int c = 0; c < N; ++c) p_next[p_.state(c + 1, j)] += passed[c];
    p_next[p_.full_state()] += passed[N];
    for (int z = 0; z < K; ++z)
      if (al[z] != 0.0) VecMap(nxt + z, K - z) += al[z] * ConstVecMap(ker, K - z);
  }
  for (int z = 0; z < K; ++z) p_next[idle_state] += alive_[static_cast<std::size_t>(J) * K + z];

  if (!normalize) return;
  double total = 0;
  for (double v : p_next) total += v;
  for (double& v : p_next) v /= total;
}

}  // namespace lull::compiler
