#include "compiler/solver/cuda/emulated_solver.h"

#include "compiler/solver/cuda/host_exec.h"
#include "compiler/solver/denormal_guard.h"
#include "compiler/solver/cuda/pipeline_solve.h"

namespace lull::compiler {
namespace {

class EmulatedCudaSolver final : public Solver {
 public:
  std::string name() const override { return "cuda-emulated"; }
  SolverOutput solve(const MdpProblem& problem, const SolveOptions& options) override {
    const DenormalGuard flush_subnormals;  // as the CPU backend computes
    cuda::HostExec exec;
    return cuda::solve_factored(problem, options, exec);
  }
};

}  // namespace

std::unique_ptr<Solver> make_emulated_cuda_solver() { return std::make_unique<EmulatedCudaSolver>(); }

}  // namespace lull::compiler
