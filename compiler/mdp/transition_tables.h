#pragma once
// The transition structure of mdp-spec section 4 in factored form.
//
// After a whole-queue action with service time tau, the next state is fixed by
// when the worker's first new query arrives (its slack at the end of the
// service gives j') and how many arrive in all (n'). Cut time at the slack
// grid: the first arrival falls in "bucket" j' = [tau - S + T_j', tau - S +
// T_j'+1). Every bucket except the first one a tau can reach has a width
// (T_j'+1 - T_j') and a remaining time to the end of the service
// (S - T_j'+1) that do not depend on tau. So, with z = central arrivals since
// the worker's last query (z < K: none has reached the worker yet):
//   pass[j'](z, n')  P(first arrival in bucket j', n' arrivals in all | z at the bucket's start)
//   kernel[j'](d)    P(d central arrivals during bucket j')  (z -> z + d, still none)
// are shared by every tau, and each tau only adds its clipped first bucket
// (tau_pass, tau_kernel). Value iteration then runs a backward recursion over
// buckets once per iteration and a K x K step per tau, instead of a K x |S|
// product per tau; the stationary distribution runs the same recursion forward.
// Counting columns: n' = 1..N in columns 0..N-1, column N is the full queue F.
#include <cstddef>
#include <vector>

#include "compiler/mdp/mdp_problem.h"

namespace lull::compiler {

struct TransitionTables {
  int K = 0, N = 0, J1 = 0;
  int cols() const { return N + 1; }
  int buckets() const { return J1 - 1; }           // j' = 0..J-1; bucket J is empty (T_J = S)

  std::vector<double> phase;        // [state][q]: phase distribution (4.1); zero rows for n = 0
  std::vector<double> pass;         // [bucket][z][col]
  std::vector<double> kernel;       // [bucket][d], d = 0..K-1
  std::vector<int> tau_bucket;      // [tau]: first bucket j_lo the first arrival can fall in
  std::vector<double> tau_pass;     // [tau][q][col]: first arrival in the clipped bucket j_lo
  std::vector<double> tau_kernel;   // [tau][d]: no worker arrival during the clipped bucket
  // Variable batching, partial actions: [count_begin[a], count_begin[a+1]) holds
  // P(k new queries) for k = 0.., the last entry being "queue overflows to F".
  std::vector<std::size_t> count_begin;
  std::vector<double> count_prob;

  std::size_t bytes() const;
};

// Phase distribution P(q), q = 0..K-1, for n queued and earliest arrival age_us ago.
void phase_distribution(int n, double age_us, double lambda_per_us, int K, double* out);

// pass(z, col) for a bucket of width_us followed by remaining_us of service.
// `out` has K * (N+1) entries.
void fill_pass_table(double lambda_per_us, double width_us, double remaining_us, int K, int N, double* out);

TransitionTables build_transition_tables(const MdpProblem& problem);

}  // namespace lull::compiler
