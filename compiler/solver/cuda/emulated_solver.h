#pragma once
// The CUDA backend's pipeline and kernel math run on the host (HostExec):
// the same element functions, index lists and summation orders as on the
// device. Tests compare it with the CPU backend on machines without a GPU,
// so the kernels' math is checked even where the kernels cannot run.
// Slow (single-threaded): for tests, not for compiling policies.
#include <memory>

#include "compiler/solver/solver.h"

namespace lull::compiler {

std::unique_ptr<Solver> make_emulated_cuda_solver();  // name() == "cuda-emulated"

}  // namespace lull::compiler
