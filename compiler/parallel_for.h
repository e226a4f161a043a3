// One parallel loop over independent items for the compiler's coarse-grained
// work (a sweep's loads, the planner's solves, the variant candidates): each
// index runs on its own OpenMP thread, and since an exception must not escape
// an OpenMP region, the first one thrown is captured and rethrown after the
// loop. One copy of that pattern, so every caller fails the same way.
#pragma once

#include <exception>

namespace lull::compiler {

// Runs body(i) for i in [0, n), in parallel when `parallel` is true (callers
// pass their own condition: a solver that allows concurrent solves, more than
// one item, not already inside a parallel region), serially otherwise.
// Rethrows the first exception a body threw, once every index has run.
template <class Body>
void parallel_for_each(int n, bool parallel, Body&& body) {
  std::exception_ptr failure;  // exceptions must not escape an OpenMP region
#pragma omp parallel for schedule(dynamic) if (parallel)
  for (int i = 0; i < n; ++i) {
    try {
      body(i);
    } catch (...) {
#pragma omp critical(lull_parallel_for_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace lull::compiler
