#pragma once
// What every element function of the factored solver shares: the sizes of
// one problem and its tables (Dims, passed by value to each element), built
// on MdpProblem's state numbering (StateIndex) and Poisson pmf, both
// callable on the host and on the device.
//
// Compiled by the host compiler (CPU executor) and by nvcc (CUDA executor),
// so: no CUDA types, no std:: calls inside LULL_HD code.
#include <math.h>

#include <cstddef>

#include "compiler/host_device.h"
#include "compiler/mdp/arrival_counts.h"
#include "compiler/mdp/state_index.h"

namespace lull::compiler::factored {

// The smallest normal double (std::numeric_limits<double>::min()): a phase
// row whose sum falls below it after an underflow becomes uniform (the
// reference's denorm_min lift, spelled out in phase_row below).
constexpr double kDoubleMinNormal = 2.2250738585072014e-308;

LULL_HD inline double max_hd(double a, double b) { return a > b ? a : b; }
LULL_HD inline double min_hd(double a, double b) { return a < b ? a : b; }
LULL_HD inline int min_int(int a, int b) { return a < b ? a : b; }

// sum_i a[i] b[i], i < n, as eight interleaved partial sums combined in a
// fixed order: a single chain of dependent multiply-adds is latency-bound,
// and eight lanes are one AVX-512 register on the CPU.
LULL_HD inline double dot(const double* a, const double* b, int n) {
  double part[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[i + l];
  for (int l = 0; i < n; ++i, ++l) part[l] += a[i] * b[i];
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

// Sizes of one problem and its factored tables. The state numbering is
// MdpProblem's (StateIndex, filled by dims_of from MdpProblem::states()).
struct Dims : StateIndex {
  int K = 0;     // phases: workers, or K' (MdpProblem::arrivals)
  int B = 0;     // shared buckets, J1 - 1
  int taus = 0;  // distinct service times
  double slo_us = 0;
  double lambda_per_us = 0;  // rate of the counting stream
  double dispersion = 1;     // of its counts: 1 Poisson, > 1 negative binomial
  int residual_len = 1;      // entries of the burst-residual table (1: no bursts)
  // Phases z = K..K+E-1 of the idle state (1, J) at the start of its service:
  // same-instant burst siblings that reach the worker after it started (the
  // worker already holds floor(z / K) more queries at time 0). 0 without them.
  int E = 0;

  // pmf of k counting-stream events in an interval with mean mu.
  LULL_HD double pmf(int k, double mu) const { return count_pmf(k, mu, dispersion); }
  LULL_HD int support_end(double mu) const { return count_support_end(mu, dispersion); }
  int span = 0;               // entries of one pass-table scratch row (pmf, CDF, survival)
  bool age_mid_cell = false;  // MdpOptions::age_mid_cell

  LULL_HD std::size_t pass_size() const { return static_cast<std::size_t>(K) * cols(); }
};

}  // namespace lull::compiler::factored
