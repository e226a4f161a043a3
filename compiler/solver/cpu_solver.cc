// The CPU backend: the factored solver's pipeline (factored/pipeline_solve.h)
// run by the CPU executor (OpenMP), with subnormals flushed to zero.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "compiler/solver/denormal_guard.h"
#include "compiler/solver/factored/cpu_exec.h"
#include "compiler/solver/factored/pipeline_solve.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {
namespace {

// One solve's OpenMP threads: as many as the machine has idle cores (online
// cores minus the 1-minute load average, what libgomp's OMP_DYNAMIC does),
// at least 1 and at most OMP_NUM_THREADS; the caller's setting is restored
// after. Fixed for the whole solve, so DenormalGuard sets up exactly the
// threads the executor then runs on. A user's OMP_NUM_THREADS or OMP_DYNAMIC
// is left alone. Why: on a machine whose cores are busy, a second thread
// descheduled at every barrier doubled a golden compile's wall and CPU time
// (docs/benchmarks.md).
class LoadThreads {
 public:
  LoadThreads() : saved_(omp_get_max_threads()) {
    if (std::getenv("OMP_NUM_THREADS") || std::getenv("OMP_DYNAMIC")) return;
    double load = 0;
    if (getloadavg(&load, 1) != 1) return;
    const long idle = std::lround(omp_get_num_procs() - load);
    omp_set_num_threads(static_cast<int>(std::clamp<long>(idle, 1, saved_)));
  }
  ~LoadThreads() { omp_set_num_threads(saved_); }
  LoadThreads(const LoadThreads&) = delete;
  LoadThreads& operator=(const LoadThreads&) = delete;

 private:
  int saved_;
};

class CpuSolver final : public Solver {
 public:
  std::string name() const override { return "cpu"; }
  bool concurrent_solves() const override { return true; }

  SolverOutput solve(const MdpProblem& p, const SolveOptions& opt) override {
    const LoadThreads threads;
    const DenormalGuard flush_subnormals;
    factored::CpuExec exec(factored::CpuExec::Threads::kAuto);
    exec.cancel_on(opt.cancel);
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

std::vector<SolverOutput> evaluate_policies(const MdpProblem& p, const std::vector<std::vector<int>>& choices,
                                            const SolveOptions& opt, bool keep_stationary) {
  const DenormalGuard flush_subnormals;
  factored::CpuExec exec(factored::CpuExec::Threads::kNever);
  const auto tables = factored::build_exec_tables(p, exec);
  std::vector<SolverOutput> outs(choices.size());
  for (std::size_t i = 0; i < choices.size(); ++i) {
    outs[i].choice = choices[i];
    factored::run_stationary(p, tables, opt, exec, outs[i]);
    if (!keep_stationary) outs[i].stationary.clear();
  }
  return outs;
}

struct PolicySteps::Impl {
  const MdpProblem& problem;
  factored::CpuExec exec{factored::CpuExec::Threads::kNever};
  factored::ExecTables<factored::CpuExec> tables;
  std::vector<std::unique_ptr<factored::PowerStep<factored::CpuExec>>> steps;
  factored::CpuExec::Buffer<double> in, raw;
  explicit Impl(const MdpProblem& p) : problem(p), tables(factored::build_exec_tables(p, exec)) {
    in = exec.zeros<double>(static_cast<std::size_t>(p.num_states()));
    raw = exec.zeros<double>(static_cast<std::size_t>(p.num_states()));
  }
};

PolicySteps::PolicySteps(const MdpProblem& p) : impl_(std::make_unique<Impl>(p)) {}
PolicySteps::~PolicySteps() = default;

int PolicySteps::add(const std::vector<int>& choice) {
  impl_->steps.push_back(
      std::make_unique<factored::PowerStep<factored::CpuExec>>(impl_->problem, impl_->tables, choice, impl_->exec));
  return static_cast<int>(impl_->steps.size()) - 1;
}

void PolicySteps::step(int id, const std::vector<double>& in, std::vector<double>& out) {
  const ThreadDenormalGuard flush_subnormals;  // the executor never threads: this thread is the one that works
  Impl& m = *impl_;
  std::copy(in.begin(), in.end(), m.in.begin());
  m.steps.at(static_cast<std::size_t>(id))->raw(m.in, m.raw);
  // Renormalised as run_stationary's power iteration does.
  const double total = m.exec.sum(m.raw.size(), factored::Entry{m.raw.data()});
  out.resize(m.raw.size());
  m.exec.for_each(out.size(), factored::Normalize{m.raw.data(), total, out.data()});
}

std::unique_ptr<Solver> make_cpu_solver() { return std::make_unique<CpuSolver>(); }

}  // namespace lull::compiler
