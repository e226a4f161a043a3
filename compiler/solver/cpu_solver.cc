// The CPU backend: the factored solver's pipeline (factored/pipeline_solve.h)
// run by the CPU executor (OpenMP), with subnormals flushed to zero.
#include <memory>

#include "compiler/solver/denormal_guard.h"
#include "compiler/solver/factored/cpu_exec.h"
#include "compiler/solver/factored/pipeline_solve.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {
namespace {

class CpuSolver final : public Solver {
 public:
  std::string name() const override { return "cpu"; }
  bool concurrent_solves() const override { return true; }

  SolverOutput solve(const MdpProblem& p, const SolveOptions& opt) override {
    const DenormalGuard flush_subnormals;
    factored::CpuExec exec(factored::CpuExec::Threads::kAuto);
    return factored::solve_factored(p, opt, exec);
  }
};

}  // namespace

void fill_expectations(const MdpProblem& p, SolverOutput& out) {
  const factored::ActionLayout L = factored::layout_actions(p);
  factored::CpuExec exec(factored::CpuExec::Threads::kNever);
  factored::sum_expectations(exec, out.stationary.size(),
                             factored::ExpectationTerm{out.choice.data(), L.batch.data(), L.meets.data(),
                                                       L.model.data(), p.accuracy.data(), out.stationary.data(), 0},
                             out);
}

std::unique_ptr<Solver> make_cpu_solver() { return std::make_unique<CpuSolver>(); }

}  // namespace lull::compiler
