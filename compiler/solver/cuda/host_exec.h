#pragma once
// The host executor of the CUDA backend's pipeline: buffers are vectors and a
// "launch" is a loop over the same element functions the kernels call. It
// lets the pipeline and its kernels' math be tested on machines without a GPU
// (test/cuda), and it defines the interface DeviceExec implements:
//   zeros<T>(n), upload(v), download(b), for_each(n, f), sequence(steps, width, f),
//   sum(n, f), sync().
#include <cstddef>
#include <vector>

namespace lull::compiler::cuda {

struct HostExec {
  template <class T>
  using Buffer = std::vector<T>;

  template <class T>
  Buffer<T> zeros(std::size_t n) { return Buffer<T>(n, T{}); }
  template <class T>
  Buffer<T> upload(const std::vector<T>& v) { return v; }
  template <class T>
  std::vector<T> download(const Buffer<T>& b) { return b; }

  // f(i) for every i < n; calls are independent (one writer per output).
  template <class F>
  void for_each(std::size_t n, const F& f) {
    for (std::size_t i = 0; i < n; ++i) f(i);
  }
  // For step = 0..steps-1 in order: f(step, i) for every i < width.
  template <class F>
  void sequence(int steps, int width, const F& f) {
    for (int step = 0; step < steps; ++step)
      for (int i = 0; i < width; ++i) f(step, i);
  }
  // Sum of f(i), i < n, left to right (the device sums in a fixed tree order).
  template <class F>
  double sum(std::size_t n, const F& f) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += f(i);
    return s;
  }
  void sync() {}
};

}  // namespace lull::compiler::cuda
