#pragma once
// Probabilities far in a Poisson tail (and the phase rule's denorm_min lift)
// are subnormal doubles, and x86 arithmetic on subnormals is ~100x slower: at
// low loads value iteration slowed from 30 ms to 3 s. Flushing them to zero
// changes results by less than 1e-307. The guard sets flush-to-zero and
// denormals-are-zero on every OpenMP thread and restores the old mode.
#include <vector>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define LULL_HAS_MXCSR 1
#endif

#include <omp.h>

namespace lull::compiler {

class DenormalGuard {
 public:
  DenormalGuard() {
#ifdef LULL_HAS_MXCSR
    saved_.assign(static_cast<std::size_t>(omp_get_max_threads()), 0u);
#pragma omp parallel
    {
      const int t = omp_get_thread_num();
      if (t < static_cast<int>(saved_.size())) saved_[t] = _mm_getcsr();
      _mm_setcsr(_mm_getcsr() | 0x8040u);  // FTZ | DAZ
    }
#endif
  }
  ~DenormalGuard(){
#ifdef LULL_HAS_MXCSR
#pragma omp parallel
      {const int t = omp_get_thread_num();
  if (t < static_cast<int>(saved_.size())) _mm_setcsr(saved_[t]);
}
#endif
}  // namespace lull::compiler
DenormalGuard(const DenormalGuard&) = delete;
DenormalGuard& operator=(const DenormalGuard&) = delete;

private:
std::vector<unsigned> saved_;
}
;

// The same for the calling thread only: single-threaded work called often
// (PolicySteps::step once per decision of a walk), where the parallel region
// above costs more than the work on a machine with busy cores.
class ThreadDenormalGuard {
 public:
  ThreadDenormalGuard() {
#ifdef LULL_HAS_MXCSR
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040u);  // FTZ | DAZ
#endif
  }
  ~ThreadDenormalGuard() {
#ifdef LULL_HAS_MXCSR
    _mm_setcsr(saved_);
#endif
  }
  ThreadDenormalGuard(const ThreadDenormalGuard&) = delete;
  ThreadDenormalGuard& operator=(const ThreadDenormalGuard&) = delete;

 private:
  unsigned saved_ = 0;
};

}  // namespace lull::compiler
