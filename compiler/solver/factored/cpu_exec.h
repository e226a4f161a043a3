#pragma once
// The CPU executor of the factored solver's pipeline (pipeline_solve.h):
// buffers are vectors (the large ones on huge pages: table_allocator.h) and a "launch" is a loop over the element
// functions, run by OpenMP threads when a step is big enough to pay for them. It defines the interface cuda::DeviceExec
// implements:
//   zeros<T>(n), upload(v), download(b), for_each(n, f), sequence(steps, width, f),
//   sum(n, f), sync(), expect_work_per_step(multiply_adds).
// Every element has one writer, so results do not depend on the threading.
#include <atomic>
#include <cstddef>
#include <utility>
#include <vector>

#include "compiler/solver/factored/pass_lanes.h"
#include "compiler/solver/factored/table_allocator.h"
#include "compiler/solver/solver.h"

namespace lull::compiler::factored {

class CpuExec {
 public:
  enum class Threads {
    kAuto,    // the table build threaded; the repeated steps only when large (see expect_work_per_step)
    kAlways,  // every loop threaded (tests: same results as kNever)
    kNever,   // single-threaded
  };

  template <class T>
  using Buffer = std::vector<T, TableAllocator<T>>;
  // The pass tables are built by PassLanes (pass_lanes.h) where it is built.
  static constexpr bool kPassLanes = LULL_PASS_LANES;

  explicit CpuExec(Threads threads = Threads::kAuto) : threads_(threads), parallel_(threads != Threads::kNever) {}

  template <class T>
  Buffer<T> zeros(std::size_t n) {
    return Buffer<T>(n, T{});
  }
  template <class T>
  Buffer<T> upload(const std::vector<T>& v) {
    return Buffer<T>(v.begin(), v.end());
  }
  template <class T>
  Buffer<T> upload(std::vector<T>&& v) {  // the source is freed, as a device upload's caller would
    Buffer<T> b(v.begin(), v.end());
    std::vector<T>().swap(v);
    return b;
  }
  template <class T>
  std::vector<T> download(const Buffer<T>& b) {
    return std::vector<T>(b.begin(), b.end());
  }

  // A solve to abandon (SolveOptions::cancel): once `cancel` is set, a
  // loop in progress skips its remaining elements and for_each throws
  // SolveCancelled (after its parallel region: nothing throws out of one).
  void cancel_on(const std::atomic<bool>* cancel) { cancel_ = cancel; }

  // f(i) for every i < n; calls are independent (one writer per output).
  template <class F>
  void for_each(std::size_t n, const F& f) {
    if (cancel_) return cancellable_for_each(n, f);
    if (!parallel_ || n < 2) {  // no parallel region at all: even an idle one costs a call into OpenMP
      for (std::size_t i = 0; i < n; ++i) f(i);
      return;
    }
    const long long count = static_cast<long long>(n);
#pragma omp parallel for schedule(dynamic, 16)
    for (long long i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
  }
  // For step = 0..steps-1 in order: f(step, i) for every i < width. Short
  // chains of K-wide steps: never worth threads.
  template <class F>
  void sequence(int steps, int width, const F& f) {
    for (int step = 0; step < steps; ++step)
      for (int i = 0; i < width; ++i) f(step, i);
  }
  // Sum of f(i), i < n, left to right (deterministic; n is a state count).
  template <class F>
  double sum(std::size_t n, const F& f) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += f(i);
    return s;
  }
  void sync() {}

  // The pipeline's repeated steps (value iteration, power iteration) do this
  // many multiply-adds each. Below ~1e7 (10 ms) waking OpenMP threads costs
  // more than it gains: milliseconds per parallel region on a busy machine.
  void expect_work_per_step(double multiply_adds) {
    if (threads_ == Threads::kAuto) parallel_ = multiply_adds > 1e7;
  }

 private:
  template <class F>
  void cancellable_for_each(std::size_t n, const F& f) {
    const std::atomic<bool>& cancel = *cancel_;
    if (!parallel_ || n < 2) {
      for (std::size_t i = 0; i < n && !cancel.load(std::memory_order_relaxed); ++i) f(i);
    } else {
      const long long count = static_cast<long long>(n);
#pragma omp parallel for schedule(dynamic, 16)
      for (long long i = 0; i < count; ++i)
        if (!cancel.load(std::memory_order_relaxed)) f(static_cast<std::size_t>(i));
    }
    if (cancel.load(std::memory_order_relaxed)) throw SolveCancelled();
  }

  Threads threads_;
  bool parallel_;
  const std::atomic<bool>* cancel_ = nullptr;
};

}  // namespace lull::compiler::factored
