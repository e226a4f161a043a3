#pragma once
// One value-iteration step over the factored transitions, one element per
// call, each summed in a fixed order:
//   ColumnValues    vcol[j][c] = V(col c of bucket j): the values pass rows multiply, contiguous
//   BucketValue     fv[j][z] = sum_c pass[j][z][c] vcol[j][c]
//   BackwardStep    bk[j][z] = fv[j][z] + sum_z2 kernel[j][z2-z] bk[j+1][z2]  (j descending)
//   TauValue        U[k][q]  for each service time, from its clipped first bucket
//   BestAction      V'(s) = max_a R(s,a) + E[V(next)], ties to the first action
#include <cstddef>

#include "compiler/solver/factored/element_math.h"

namespace lull::compiler::factored {

struct ColumnValues {
  Dims d;
  const double* V;
  double* vcol;  // [j][col], j = 0..B-1

  LULL_HD void operator()(std::size_t i) const {
    const int cols = d.cols(), j = static_cast<int>(i / cols), c = static_cast<int>(i % cols);
    vcol[i] = V[d.col_state(j, c)];
  }
};

struct BucketValue {
  Dims d;
  const double* pass;  // shared buckets first: [j][z][col]
  const double* vcol;
  double* fv;  // [j][z]

  LULL_HD void operator()(std::size_t i) const {
    const int j = static_cast<int>(i / d.K), z = static_cast<int>(i % d.K), cols = d.cols();
    const double* row = pass + static_cast<std::size_t>(j) * d.pass_size() + static_cast<std::size_t>(z) * cols;
    const double* v = vcol + static_cast<std::size_t>(j) * cols;
    fv[i] = dot(row, v, cols);
  }
};

// Step 0 sets bk[J] = V(1, J) (no arrival during the whole service: idle);
// step i > 0 computes bucket j = J - i from bucket j + 1.
struct BackwardStep {
  Dims d;
  const double* kernel;  // [j][d]
  const double* fv;
  const double* V;
  double* bk;  // [j][z], j = 0..J

  LULL_HD void operator()(int step, int z) const {
    const int J = d.J1 - 1, K = d.K;
    if (step == 0) {
      bk[static_cast<std::size_t>(J) * K + z] = V[d.idle()];
      return;
    }
    const int j = J - step;
    const double* ker = kernel + static_cast<std::size_t>(j) * K;
    const double* next = bk + static_cast<std::size_t>(j + 1) * K;
    bk[static_cast<std::size_t>(j) * K + z] = fv[static_cast<std::size_t>(j) * K + z] + dot(ker, next + z, K - z);
  }
};

struct TauValue {
  Dims d;
  const double* tau_pass;    // [k][q][col]
  const double* tau_kernel;  // [k][d]
  const int* tau_bucket;
  const double* bk;
  const double* vcol;
  double* U;  // [k][q]

  LULL_HD void operator()(std::size_t i) const {
    const int k = static_cast<int>(i / d.K), q = static_cast<int>(i % d.K), K = d.K, cols = d.cols();
    const int jlo = tau_bucket[k];
    const double* pass = tau_pass + static_cast<std::size_t>(k) * d.pass_size() + static_cast<std::size_t>(q) * cols;
    const double* ker = tau_kernel + static_cast<std::size_t>(k) * K;
    const double* next = bk + static_cast<std::size_t>(jlo + 1) * K;
    const double* v = vcol + static_cast<std::size_t>(jlo) * cols;
    U[i] = dot(pass, v, cols) + dot(ker, next + q, K - q);
  }
};

// The actions of MdpProblem as flat arrays.
struct ActionArrays {
  const int* begin;  // [s], S + 1 entries
  const int* batch;
  const int* tau;
  const int* next_j;  // -1: whole-queue action
  const double* reward;
  const std::size_t* count_begin;
};

// The idle state's phases past K (Dims::E > 0): U_idle[k] = their share of
// E[V(next) | tau k], from the tau's first bucket (IdleExtraRows).
struct IdleTauValue {
  Dims d;
  const double* idle_rows;  // [k][col]
  const int* tau_bucket;
  const double* vcol;
  double* U_idle;  // [k]

  LULL_HD void operator()(std::size_t k) const {
    const int cols = d.cols();
    U_idle[k] = dot(idle_rows + k * cols, vcol + static_cast<std::size_t>(tau_bucket[k]) * cols, cols);
  }
};

LULL_HD inline double q_value(const Dims& d, const ActionArrays& A, const double* phase, const double* count_prob,
                              const double* V, const double* U, const double* U_idle, int s, int a) {
  double s_next = 0;
  if (A.next_j[a] >= 0) {
    const int left = d.n_of(s) - A.batch[a];
    const double* prob = count_prob + A.count_begin[a];
    const int len = static_cast<int>(A.count_begin[a + 1] - A.count_begin[a]);
    for (int k = 0; k < len; ++k) {
      const int n = left + k;
      s_next += prob[k] * V[n > d.N ? d.full() : d.state(n, A.next_j[a])];
    }
  } else {
    s_next = dot(phase + static_cast<std::size_t>(s) * d.K, U + static_cast<std::size_t>(A.tau[a]) * d.K, d.K);
    if (d.E > 0 && s == d.idle()) s_next += U_idle[A.tau[a]];
  }
  return A.reward[a] + s_next;
}

struct BestAction {
  Dims d;
  ActionArrays A;
  const double* phase;
  const double* count_prob;
  const double* V;
  const double* U;
  const double* U_idle;  // [k] (IdleTauValue), read when Dims::E > 0
  double* V_next;
  int* choice;  // -1 for states without actions (n = 0)

  LULL_HD void operator()(std::size_t i) const {
    const int s = static_cast<int>(i), a0 = A.begin[s], a1 = A.begin[s + 1];
    if (a0 == a1) {  // n = 0: never reached, moves to (1, J)
      V_next[s] = V[d.idle()];
      choice[s] = -1;
      return;
    }
    double best = q_value(d, A, phase, count_prob, V, U, U_idle, s, a0);
    int arg = a0;
    for (int a = a0 + 1; a < a1; ++a) {
      const double q = q_value(d, A, phase, count_prob, V, U, U_idle, s, a);
      if (q > best) {  // ties go to the first action
        best = q;
        arg = a;
      }
    }
    V_next[s] = best;
    choice[s] = arg;
  }
};

}  // namespace lull::compiler::factored
