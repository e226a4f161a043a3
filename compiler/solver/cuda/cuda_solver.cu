// The CUDA solver: the factored solver's pipeline (compiler/solver/factored)
// run by the device executor. All the math lives in the element functions
// there, shared with the CPU solver, which runs them with the CPU executor.
#include "compiler/solver/cuda/cuda_solver.h"

#include <cuda_runtime.h>

#include <cstdio>

#include "compiler/solver/cuda/device_exec.cuh"
#include "compiler/solver/factored/pipeline_solve.h"

namespace lull::compiler {
namespace {

class CudaSolver final : public Solver {
 public:
  std::string name() const override { return "cuda"; }

  SolverOutput solve(const MdpProblem& problem, const SolveOptions& options) override {
    cuda::DeviceExec exec;
    SolverOutput out = factored::solve_factored(problem, options, exec);
    out.device_bytes = exec.meter().peak_device_bytes();
    return out;
  }
};

}  // namespace

bool cuda_solver_device_available(std::string* why_not) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why_not) {
      *why_not = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
      if (err == cudaErrorInsufficientDriver) *why_not += " (no NVIDIA driver, or one older than this CUDA runtime)";
    }
    cudaGetLastError();  // reset the runtime's last-error state
    return false;
  }
  if (count == 0) {
    if (why_not) *why_not = "cudaGetDeviceCount: no CUDA-capable device is detected";
    return false;
  }
  return true;
}

std::string cuda_solver_device_description() {
  std::string why;
  if (!cuda_solver_device_available(&why)) return "no CUDA device: " + why;
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return "CUDA device (properties unavailable)";
  }
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s, compute capability %d.%d, %.1f GiB", prop.name, prop.major, prop.minor,
                prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

std::unique_ptr<Solver> make_cuda_solver() { return std::make_unique<CudaSolver>(); }

}  // namespace lull::compiler
