#pragma once
// The device executor of the factored solver's pipeline (the twin of
// factored::CpuExec, see compiler/solver/factored/cpu_exec.h for the
// interface): buffers in device memory, for_each as a grid of threads,
// sequence as one block stepping with __syncthreads (the bucket recursions
// are short chains of K-wide steps: one launch per chain, not per step), sum
// as a one-block tree reduction in a fixed order (deterministic results).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "compiler/solver/cuda/cuda_check.h"
#include "compiler/solver/cuda/device_buffer.h"

namespace lull::compiler::cuda {

template <class F>
__global__ void for_each_kernel(std::size_t n, F f) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

template <class F>
__global__ void sequence_kernel(int steps, int width, F f) {
  for (int step = 0; step < steps; ++step) {
    for (int i = threadIdx.x; i < width; i += blockDim.x) f(step, i);
    __syncthreads();  // step + 1 reads what step wrote (global memory, one block)
  }
}

constexpr int kSumThreads = 512;  // a power of two

template <class F>
__global__ void sum_kernel(std::size_t n, F f, double* out) {
  __shared__ double part[kSumThreads];
  double s = 0;
  for (std::size_t i = threadIdx.x; i < n; i += kSumThreads) s += f(i);
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kSumThreads / 2; w > 0; w /= 2) {
    if (static_cast<int>(threadIdx.x) < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = part[0];
}

class DeviceExec {
 public:
  template <class T>
  using Buffer = DeviceBuffer<T>;

  DeviceExec() : scalar_(1, &meter_) {}

  template <class T>
  Buffer<T> zeros(std::size_t n) {
    Buffer<T> b(n, &meter_);
    if (n) LULL_CUDA_CHECK(cudaMemset(b.data(), 0, n * sizeof(T)));
    return b;
  }
  template <class T>
  Buffer<T> upload(const std::vector<T>& v) {
    Buffer<T> b(v.size(), &meter_);
    if (!v.empty()) LULL_CUDA_CHECK(cudaMemcpy(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return b;
  }
  template <class T>
  std::vector<T> download(const Buffer<T>& b) {
    std::vector<T> v(b.size());
    if (!v.empty()) LULL_CUDA_CHECK(cudaMemcpy(v.data(), b.data(), v.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }

  template <class F>
  void for_each(std::size_t n, const F& f) {
    if (n == 0) return;
    constexpr int threads = 256;
    const std::size_t blocks = std::min<std::size_t>((n + threads - 1) / threads, 65535u * 16u);
    for_each_kernel<<<static_cast<unsigned>(blocks), threads>>>(n, f);
    LULL_CUDA_CHECK_LAUNCH("for_each_kernel");
  }
  template <class F>
  void sequence(int steps, int width, const F& f) {
    if (steps <= 0 || width <= 0) return;
    const int threads = std::min(1024, (width + 31) / 32 * 32);
    sequence_kernel<<<1, threads>>>(steps, width, f);
    LULL_CUDA_CHECK_LAUNCH("sequence_kernel");
  }
  template <class F>
  double sum(std::size_t n, const F& f) {
    sum_kernel<<<1, kSumThreads>>>(n, f, scalar_.data());
    LULL_CUDA_CHECK_LAUNCH("sum_kernel");
    double s = 0;
    LULL_CUDA_CHECK(cudaMemcpy(&s, scalar_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    return s;
  }
  void sync() { LULL_CUDA_CHECK(cudaDeviceSynchronize()); }
  // Every step runs on the device whatever its size (CpuExec threads by it).
  void expect_work_per_step(double) {}

  const MemoryMeter& meter() const { return meter_; }

 private:
  MemoryMeter meter_;  // declared first: outlives every buffer below and in the pipeline
  DeviceBuffer<double> scalar_;
};

}  // namespace lull::compiler::cuda
