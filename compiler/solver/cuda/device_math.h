#pragma once
// Math shared by the CUDA kernels and their host emulation: the macro that
// makes a function callable on both sides, the Poisson pmf exactly as
// compiler/mdp/poisson.cc computes it (so underflow to zero happens in the
// same places), and the state indexing of MdpProblem as plain integers.
//
// Compiled by nvcc for the device and by the host compiler for the emulation
// test (test/cuda), so: no CUDA types, no std:: calls inside LULL_HD code.
#include <math.h>

#include <cstddef>

#ifdef __CUDACC__
#define LULL_HD __host__ __device__
#else
#define LULL_HD
#endif

namespace lull::compiler::cuda {

// The smallest normal double (std::numeric_limits<double>::min()): a phase
// row whose sum falls below it after an underflow becomes uniform (the
// reference's denorm_min lift, as compiler/mdp/transition_tables.cc spells it).
constexpr double kDoubleMinNormal = 2.2250738585072014e-308;

LULL_HD inline double poisson_pmf_hd(int k, double mu) {
  if (k < 0) return 0.0;
  if (mu <= 0) return k == 0 ? 1.0 : 0.0;
  return exp(k * log(mu) - lgamma(k + 1.0) - mu);
}

// As poisson_support_end in compiler/mdp/poisson.cc.
LULL_HD inline int poisson_support_end_hd(double mu) { return static_cast<int>(ceil(mu + 14.0 * sqrt(mu) + 45.0)); }

LULL_HD inline double max_hd(double a, double b) { return a > b ? a : b; }
LULL_HD inline double min_hd(double a, double b) { return a < b ? a : b; }

// Sizes of one problem and its factored tables, passed by value to kernels.
struct Dims {
  int K = 0;          // workers (phases)
  int N = 0;          // largest tracked queue
  int J1 = 0;         // slack points, J + 1
  int S = 0;          // states, (N+1) J1 + 1
  int B = 0;          // shared buckets, J1 - 1
  int taus = 0;       // distinct service times
  double slo_us = 0;
  double lambda_per_us = 0;
  int span = 0;       // entries of one pass-table scratch row (pmf, CDF, survival)

  LULL_HD int cols() const { return N + 1; }         // n' = 1..N, then F
  LULL_HD int full() const { return (N + 1) * J1; }  // the state F
  LULL_HD int state(int n, int j) const { return n * J1 + j; }
  LULL_HD int n_of(int s) const { return s == full() ? N + 1 : s / J1; }
  LULL_HD int j_of(int s) const { return s == full() ? 0 : s % J1; }
  LULL_HD int idle() const { return state(1, J1 - 1); }  // (1, J): where n' = 0 goes
  // State of column c of bucket j: (c + 1, j), or F for the last column.
  LULL_HD int col_state(int j, int c) const { return c < N ? state(c + 1, j) : full(); }
  LULL_HD std::size_t pass_size() const { return static_cast<std::size_t>(K) * cols(); }
};

}  // namespace lull::compiler::cuda
