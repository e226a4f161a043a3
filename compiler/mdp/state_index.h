#pragma once
// The state numbering of mdp-spec section 2 as plain integers: states (n, j)
// for n = 0..N, j = 0..J (slack index), then the full-queue state F. One
// definition, used by MdpProblem and (copied by value into kernel
// parameters) by the factored solver's element functions on host and device.
#include "compiler/host_device.h"

namespace lull::compiler {

struct StateIndex {
  int N = 0;   // largest tracked queue
  int J1 = 0;  // slack points, J + 1

  LULL_HD int num_states() const { return (N + 1) * J1 + 1; }
  LULL_HD int state(int n, int j) const { return n * J1 + j; }
  LULL_HD int full() const { return (N + 1) * J1; }  // the state F
  LULL_HD int n_of(int s) const { return s == full() ? N + 1 : s / J1; }
  LULL_HD int j_of(int s) const { return s == full() ? 0 : s % J1; }
  LULL_HD int idle() const { return state(1, J1 - 1); }  // (1, J): where "no new query" goes
  // Columns of a pass table (transition structure): n' = 1..N in c = 0..N-1,
  // then F. Column c of bucket j is state (c + 1, j), or F.
  LULL_HD int cols() const { return N + 1; }
  LULL_HD int col_state(int j, int c) const { return c < N ? state(c + 1, j) : full(); }
};

}  // namespace lull::compiler
