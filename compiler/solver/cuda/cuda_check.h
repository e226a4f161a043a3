#pragma once
// Every CUDA runtime call and every kernel launch goes through these: a
// failure becomes std::runtime_error("file:line: call: CUDA's message").
// With LULL_CUDA_SYNC_LAUNCHES=1 in the environment each launch is also
// synchronized, so an error inside a kernel is reported at its own launch.
#include <cuda_runtime.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace lull::compiler::cuda {

inline void throw_on_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                           cudaGetErrorString(err));
}

inline bool sync_every_launch() {
  static const bool on = [] {
    const char* v = std::getenv("LULL_CUDA_SYNC_LAUNCHES");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

inline void check_launch(const char* kernel, const char* file, int line) {
  throw_on_cuda_error(cudaGetLastError(), kernel, file, line);
  if (sync_every_launch()) throw_on_cuda_error(cudaDeviceSynchronize(), kernel, file, line);
}

}  // namespace lull::compiler::cuda

#define LULL_CUDA_CHECK(call) ::lull::compiler::cuda::throw_on_cuda_error((call), #call, __FILE__, __LINE__)
#define LULL_CUDA_CHECK_LAUNCH(kernel) ::lull::compiler::cuda::check_launch(kernel, __FILE__, __LINE__)
