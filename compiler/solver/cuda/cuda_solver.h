#pragma once
// The CUDA solver backend (plain C++ header: no CUDA types). The registry
// (solver_registry.cc) asks for a device first and falls back or fails with
// the reason when there is none.
#include <memory>
#include <string>

#include "compiler/solver/solver.h"

namespace lull::compiler {

// True when the CUDA runtime sees a device; otherwise false with the reason
// (e.g. "cudaGetDeviceCount: no CUDA-capable device is detected"). Never throws.
bool cuda_solver_device_available(std::string* why_not);

// "NVIDIA H100 80GB HBM3, compute capability 9.0, 79.1 GiB" for device 0, or
// the reason there is none. Never throws.
std::string cuda_solver_device_description();

// Builds the transitions, runs value iteration and the stationary
// distribution on device 0 (CUDA_VISIBLE_DEVICES picks it). Its solve()
// throws std::runtime_error naming the failing CUDA call.
std::unique_ptr<Solver> make_cuda_solver();

}  // namespace lull::compiler
