#include "compiler/solver/solver_registry.h"

#include <stdexcept>

#ifdef LULL_HAVE_CUDA
#include "compiler/solver/cuda/cuda_solver.h"
#endif

namespace lull::compiler {

bool cuda_device_available(std::string* why_not) {
#ifdef LULL_HAVE_CUDA
  return cuda_solver_device_available(why_not);
#else
  if (why_not) *why_not = "this build of lull has no CUDA backend (nvcc was not found at configure time)";
  return false;
#endif
}

std::unique_ptr<Solver> make_solver(const std::string& device, [[maybe_unused]] std::ostream* log) {
  if (device == "cpu") return make_cpu_solver();
  std::string why;
  if (device == "cuda" || device == "auto") {
    if (cuda_device_available(&why)) {
#ifdef LULL_HAVE_CUDA
      if (log && device == "auto") *log << "lull: --device auto: using the CUDA solver\n";
      return make_cuda_solver();
#endif
    }
    if (device == "cuda") throw std::runtime_error("--device cuda: no CUDA device: " + why);
    // auto on a machine without a GPU is the common case, not news: the
    // command's last line names the solver it used.
    return make_cpu_solver();
  }
  throw std::runtime_error("--device: unknown device '" + device + "' (expected cpu, cuda or auto)");
}

}  // namespace lull::compiler
