#pragma once
// Owning device memory (plain cudaMalloc / cudaFree) and a meter of how much
// the solver holds: the sum of its live buffers, and the drop in the device's
// free memory (cudaMemGetInfo), both at their peak.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "compiler/solver/cuda/cuda_check.h"

namespace lull::compiler::cuda {

class MemoryMeter {
 public:
  MemoryMeter() {
    std::size_t total = 0;
    LULL_CUDA_CHECK(cudaMemGetInfo(&free_at_start_, &total));
    min_free_ = free_at_start_;
  }
  void allocated(std::size_t bytes) {
    live_ += bytes;
    peak_live_ = std::max(peak_live_, live_);
    std::size_t free = 0, total = 0;
    LULL_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    min_free_ = std::min(min_free_, free);
  }
  void freed(std::size_t bytes) { live_ -= bytes; }
  std::size_t peak_live_bytes() const { return peak_live_; }
  std::size_t peak_device_bytes() const { return free_at_start_ - min_free_; }

 private:
  std::size_t live_ = 0, peak_live_ = 0, free_at_start_ = 0, min_free_ = 0;
};

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t n, MemoryMeter* meter) : n_(n), meter_(meter) {
    if (n == 0) return;
    void* p = nullptr;
    LULL_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    p_ = static_cast<T*>(p);
    if (meter_) meter_->allocated(n * sizeof(T));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer(std::move(o)).swap(*this);
    return *this;
  }
  ~DeviceBuffer() {
    if (!p_) return;
    cudaFree(p_);  // no throwing from a destructor; a failed free shows at the next checked call
    if (meter_) meter_->freed(n_ * sizeof(T));
  }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(meter_, o.meter_);
  }

  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
  MemoryMeter* meter_ = nullptr;
};

template <class T>
void swap(DeviceBuffer<T>& a, DeviceBuffer<T>& b) noexcept {
  a.swap(b);
}

}  // namespace lull::compiler::cuda
