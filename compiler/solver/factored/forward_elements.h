#pragma once
// One step p -> P_pi^T p of the stationary power iteration under a fixed
// policy, written as gathers so every output element has one writer and a
// fixed summation order (no atomics, the same result on every executor),
// plus the terms of the expectations (mdp-spec 6):
//   TauMass         mass[k][.]     phase-weighted mass entering service time k
//   GroupColumns    add_cols[j][.] clipped first buckets of the taus starting in bucket j
//   GroupAlive      alive[j+1][.]  ... and the mass still waiting for its first arrival
//   ForwardStep     alive[j+1][z] += mass carried through shared bucket j (j ascending)
//   BucketColumns   passed[j][.]   first arrivals in shared bucket j, per column
//   AssembleState   p_next[t] from all of the above and the partial actions
// The index lists (taus per state set, taus per first bucket, sources per
// target) are built on the host once per policy (pipeline_layout.h).
#include <cstddef>

#include "compiler/solver/factored/element_math.h"

namespace lull::compiler::factored {

// One row mass[k][.] per call: the states that chose tau k are read once
// (most hold no mass), each row summed over the states in ascending order;
// mass_any[k] says whether the row holds any mass (the gathers below skip it).
struct TauMass {
  Dims d;
  const int* states_begin;  // [k]: states whose chosen action is whole-queue with tau k
  const int* states;
  const double* phase;
  const double* p;
  double* mass;       // [k][q]
  double* mass_idle;  // [k]: the idle state's mass, when Dims::E > 0 (its phases past K)
  char* mass_any;     // [k]

  LULL_HD void operator()(std::size_t k) const {
    const int K = d.K;
    double* m = mass + k * K;
    for (int q = 0; q < K; ++q) m[q] = 0.0;
    if (d.E > 0) mass_idle[k] = 0.0;
    char any = 0;
    for (int e = states_begin[k]; e < states_begin[k + 1]; ++e) {
      const int s = states[e];
      const double ps = p[s];
      if (ps == 0.0) continue;
      any = 1;
      const double* ph = phase + static_cast<std::size_t>(s) * K;
      for (int q = 0; q < K; ++q) m[q] += ps * ph[q];
      if (d.E > 0 && s == d.idle()) mass_idle[k] = ps;
    }
    mass_any[k] = any;
  }
};

// Row add_cols[j][.] per call (j = 0..J): the clipped first buckets of the
// taus starting in bucket j, q outer (skipping q without mass), columns
// inner (independent, contiguous: they vectorize).
struct GroupColumns {
  Dims d;
  const int* group_begin;  // [j]: taus whose first bucket is j
  const int* group_taus;
  const double* mass;
  const double* mass_idle;  // [k] (Dims::E > 0)
  const char* mass_any;
  const double* tau_pass;   // [k][q][col]
  const double* idle_rows;  // [k][col] (Dims::E > 0)
  double* add_cols;         // [j][col]

  LULL_HD void operator()(std::size_t j) const {
    const int cols = d.cols(), K = d.K;
    double* out = add_cols + j * cols;
    for (int c = 0; c < cols; ++c) out[c] = 0.0;
    for (int e = group_begin[j]; e < group_begin[j + 1]; ++e) {
      const int k = group_taus[e];
      if (!mass_any[k]) continue;
      const double* m = mass + static_cast<std::size_t>(k) * K;
      const double* pass = tau_pass + static_cast<std::size_t>(k) * d.pass_size();
      for (int q = 0; q < K; ++q) {
        const double mq = m[q];
        if (mq == 0.0) continue;
        const double* row = pass + q * cols;
        for (int c = 0; c < cols; ++c) out[c] += mq * row[c];
      }
      if (d.E > 0 && mass_idle[k] != 0.0) {  // the idle state's phases past K
        const double* row = idle_rows + static_cast<std::size_t>(k) * cols;
        for (int c = 0; c < cols; ++c) out[c] += mass_idle[k] * row[c];
      }
    }
  }
};

// Row alive[j + 1][.] per call, for first buckets j = 0..J-1 (no tau starts
// in bucket J): the mass of the taus starting in bucket j that is still
// waiting for its first arrival, q outer as above.
struct GroupAlive {
  Dims d;
  const int* group_begin;
  const int* group_taus;
  const double* mass;
  const char* mass_any;
  const double* tau_kernel;  // [k][d]
  double* alive;             // [j][z], j = 0..J; row 0 stays zero

  LULL_HD void operator()(std::size_t j) const {
    const int K = d.K;
    double* out = alive + (j + 1) * K;
    for (int z = 0; z < K; ++z) out[z] = 0.0;
    for (int e = group_begin[j]; e < group_begin[j + 1]; ++e) {
      const int k = group_taus[e];
      if (!mass_any[k]) continue;
      const double* m = mass + static_cast<std::size_t>(k) * K;
      const double* ker = tau_kernel + static_cast<std::size_t>(k) * K;
      for (int q = 0; q < K; ++q) {
        const double mq = m[q];
        if (mq == 0.0) continue;
        for (int z2 = q; z2 < K; ++z2) out[z2] += mq * ker[z2 - q];
      }
    }
  }
};

// Step j carries bucket j's surviving mass into bucket j + 1.
struct ForwardStep {
  Dims d;
  const double* kernel;  // shared buckets: [j][d]
  double* alive;

  LULL_HD void operator()(int j, int z2) const {
    const int K = d.K;
    const double* al = alive + static_cast<std::size_t>(j) * K;
    const double* ker = kernel + static_cast<std::size_t>(j) * K;
    double x = alive[static_cast<std::size_t>(j + 1) * K + z2];
    // As in dot(): four partial sums (the kernel runs backwards here).
    double part[4] = {0.0, 0.0, 0.0, 0.0};
    int z = 0;
    for (; z + 3 <= z2; z += 4)
      for (int l = 0; l < 4; ++l) part[l] += al[z + l] * ker[z2 - z - l];
    for (; z <= z2; ++z) part[0] += al[z] * ker[z2 - z];
    x += (part[0] + part[1]) + (part[2] + part[3]);
    alive[static_cast<std::size_t>(j + 1) * K + z2] = x;
  }
};

// passed[j][c] = sum_z alive[j][z] pass[j][z][c], one bucket per call: rows
// are added whole (z outer, skipping z without mass, the common case).
struct BucketColumns {
  Dims d;
  const double* pass;   // shared buckets: [j][z][col]
  const double* alive;  // [j][z]
  double* passed;       // [j][col]

  LULL_HD void operator()(std::size_t j) const {
    const int K = d.K, cols = d.cols();
    const double* al = alive + j * K;
    const double* pass_j = pass + j * d.pass_size();
    double* out = passed + j * cols;
    for (int c = 0; c < cols; ++c) out[c] = 0.0;
    for (int z = 0; z < K; ++z) {
      const double a = al[z];
      if (a == 0.0) continue;
      for (int c = 0; c < cols; ++c) out[c] += a * pass_j[z * cols + c];
    }
  }
};

struct AssembleState {
  Dims d;
  const int* in_begin;  // [t]: sources of partial-action and idle moves into t
  const int* in_src;
  const long long* in_prob;  // index into count_prob, -1: probability 1
  const double* count_prob;
  const double* p;
  const double* add_cols;  // [j][col]
  const double* passed;    // shared buckets: [j][col] (BucketColumns)
  const double* alive;     // [j][z]
  double* p_next;

  LULL_HD void operator()(std::size_t i) const {
    const int t = static_cast<int>(i), K = d.K, J = d.J1 - 1, cols = d.cols();
    double x = 0;
    for (int e = in_begin[t]; e < in_begin[t + 1]; ++e) {
      const double ps = p[in_src[e]];
      if (ps == 0.0) continue;
      if (in_prob[e] < 0)
        x += ps;
      else
        x += ps * count_prob[in_prob[e]];
    }
    const int n = d.n_of(t), j = d.j_of(t);
    if (t == d.full()) {
      for (int jl = 0; jl < d.J1; ++jl) x += add_cols[static_cast<std::size_t>(jl) * cols + d.N];
      for (int b = 0; b < d.B; ++b) x += passed[static_cast<std::size_t>(b) * cols + d.N];
    } else if (n >= 1 && j < J) {
      x += add_cols[static_cast<std::size_t>(j) * cols + (n - 1)];
      x += passed[static_cast<std::size_t>(j) * cols + (n - 1)];
    }
    if (t == d.idle())
      for (int z = 0; z < K; ++z) x += alive[static_cast<std::size_t>(J) * K + z];
    p_next[t] = x;
  }
};

// Elementwise helpers of the power iteration: the terms summed by Exec::sum
// and the normalization.
struct Entry {
  const double* v;
  LULL_HD double operator()(std::size_t i) const { return v[i]; }
};

struct AbsDifference {
  const double* a;
  const double* b;
  LULL_HD double operator()(std::size_t i) const { return fabs(a[i] - b[i]); }
};

struct Normalize {
  const double* in;
  double total;
  double* out;
  LULL_HD void operator()(std::size_t i) const { out[i] = in[i] / total; }
};

// Terms of the expectations: w(s) = p(s) b(s), split by whether the chosen
// action meets the SLO. `part`: 0 all, 1 missed, 2 met, 3 met times accuracy.
struct ExpectationTerm {
  const int* choice;
  const int* action_batch;
  const char* action_meets;
  const int* action_model;
  const double* accuracy;
  const double* p;
  int part;

  LULL_HD double operator()(std::size_t i) const {
    const int a = choice[i];
    if (a < 0) return 0.0;
    const double w = p[i] * action_batch[a];
    const bool met = action_meets[a] != 0;
    switch (part) {
      case 0:
        return w;
      case 1:
        return met ? 0.0 : w;
      case 2:
        return met ? w : 0.0;
      default:
        return met ? w * accuracy[action_model[a]] : 0.0;
    }
  }
};

}  // namespace lull::compiler::factored
