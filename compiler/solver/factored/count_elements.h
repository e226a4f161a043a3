#pragma once
// Variable batching's partial actions (serve b < n, keep n - b queued): the
// distribution of the number of new queries during the service, per action
// (a count table per service time, then the mixture over the phase), one
// element per call. "Count slots" number the service times that
// some partial action uses.
#include <cstddef>

#include "compiler/solver/factored/element_math.h"

namespace lull::compiler::factored {

// Central arrivals in [0, tau): px[slot][x], x < support_end(lambda tau) + K.
struct CountPmf {
  Dims d;
  const double* taus_us;
  const int* slot_tau;  // [slot]: tau index
  int stride;           // entries per slot row
  double* px;

  LULL_HD void operator()(std::size_t i) const {
    const int slot = static_cast<int>(i / stride), x = static_cast<int>(i % stride);
    const double mu = d.lambda_per_us * taus_us[slot_tau[slot]];
    px[i] = x < d.support_end(mu) + d.K ? d.pmf(x, mu) : 0.0;
  }
};

// table[slot][q][k]: P(k worker arrivals during tau | phase q), k = 0..N+1,
// the last entry collecting N+1 or more.
struct CountTableElement {
  Dims d;
  const double* taus_us;
  const int* slot_tau;
  int stride;
  const double* px;
  double* table;

  LULL_HD void operator()(std::size_t i) const {
    const int kcap = d.N + 1, width = kcap + 1, K = d.K;
    const int slot = static_cast<int>(i / (static_cast<std::size_t>(K) * width));
    const int r = static_cast<int>(i % (static_cast<std::size_t>(K) * width));
    const int q = r / width, k = r % width;
    const int xend = min_int(d.support_end(d.lambda_per_us * taus_us[slot_tau[slot]]) + K, stride);  // inside the row
    // (q + x) / K == k  <=>  kK - q <= x <= kK + K - 1 - q.
    const int lo = k * K - q > 0 ? k * K - q : 0;
    const int hi = k == kcap || k * K + K - 1 - q > xend - 1 ? xend - 1 : k * K + K - 1 - q;
    const double* row = px + static_cast<std::size_t>(slot) * stride;
    double acc = 0;
    for (int x = lo; x <= hi; ++x) acc += row[x];
    table[i] = acc;
  }
};

// count_prob of one partial action: P(k new queries), k = 0..N - left, then
// the overflow to F; mixed over the phase of the action's state.
struct CountProbs {
  Dims d;
  const int* action_state;
  const int* action_batch;
  const int* action_tau;
  const int* action_next_j;        // -1: whole-queue action
  const std::size_t* count_begin;  // [a]
  const int* tau_slot;             // [tau]: count slot, -1 when none
  const double* table;             // [slot][q][k]
  const double* phase;             // [s][q]
  double* count_prob;

  LULL_HD void operator()(std::size_t i) const {
    const int a = static_cast<int>(i);
    if (action_next_j[a] < 0) return;
    const int s = action_state[a], K = d.K, width = d.N + 2;
    const int left = d.n_of(s) - action_batch[a];
    const int len = d.N + 2 - left;
    const double* ph = phase + static_cast<std::size_t>(s) * K;
    const double* c = table + static_cast<std::size_t>(tau_slot[action_tau[a]]) * K * width;
    double* out = count_prob + count_begin[a];
    // Per output entry: sum over q of ph[q] c[q][k], q ascending, in a register.
    for (int i = 0; i + 1 < len; ++i) {
      double acc = 0;
      for (int q = 0; q < K; ++q) acc += ph[q] * c[q * width + i];
      out[i] = acc;
    }
    double rest = 0;  // k >= len - 1: the queue overflows
    for (int q = 0; q < K; ++q)
      for (int k = len - 1; k < width; ++k) rest += ph[q] * c[q * width + k];
    out[len - 1] = rest;
  }
};

}  // namespace lull::compiler::factored
