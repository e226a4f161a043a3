#pragma once
// The solver interface: a backend takes an MDP problem and returns the policy
// (values, chosen actions, residual) and its expectations (mdp-spec 5-6),
// with the seconds spent in each phase. The CPU backend and the CUDA backend
// implement it; the compiler does not know which one runs.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/mdp/mdp_problem.h"

namespace lull::compiler {

struct SolveOptions {
  int horizon = 100;  // value-iteration steps (reference mode)
  int max_stationary_steps = 1000;
  // The power iteration for the stationary distribution stops early once an
  // L1 step changes less than this (the reference always runs 1000 steps;
  // the difference is below 1e-12 in the expectations).
  double stationary_tolerance = 1e-15;
  // When set and true, the solve stops at its next iteration (value or
  // power) and throws SolveCancelled: how a stopping server abandons an
  // online compilation. The iterations themselves are unchanged.
  const std::atomic<bool>* cancel = nullptr;
};

struct SolveCancelled : std::runtime_error {
  SolveCancelled() : std::runtime_error("the compilation was abandoned (the server is stopping)") {}
};

// Throws SolveCancelled when `options` asks to stop.
inline void throw_if_cancelled(const SolveOptions& options) {
  if (options.cancel && options.cancel->load(std::memory_order_relaxed)) throw SolveCancelled();
}

struct PhaseSeconds {
  double build = 0;   // transition structure
  double solve = 0;   // value iteration
  double expect = 0;  // stationary distribution + expectations
};

struct SolverOutput {
  std::vector<double> values;      // V_H per state
  std::vector<int> choice;         // chosen action index per state, -1 for n = 0 states
  double residual = 0;             // max |V_H - V_{H-1}|
  std::vector<double> stationary;  // p after the power iteration
  int stationary_steps = 0;
  double expected_accuracy = 0;  // per satisfied query
  double expected_violation_rate = 0;
  PhaseSeconds seconds;
  std::size_t table_bytes = 0;   // size of the transition structure
  std::size_t device_bytes = 0;  // CUDA: peak drop in free device memory during the solve; 0 on the CPU
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string name() const = 0;
  virtual SolverOutput solve(const MdpProblem& problem, const SolveOptions& options) = 0;
  // True when several solve() calls may run at once on CPU threads (a sweep
  // then solves its loads in parallel, one thread each).
  virtual bool concurrent_solves() const { return false; }
};

// Expectations of section 6 from a distribution over states and a policy.
void fill_expectations(const MdpProblem& problem, SolverOutput& out);

// Fixed policies' expectations on `problem` (the power iteration of section
// 5 on the CPU, no value iteration; the transition tables built once): each
// choice from a policy compiled for another load of the same states and
// actions (compiler/lagged_mixture.h). One output per choice, in order;
// `keep_stationary`: each output keeps its distribution over states.
std::vector<SolverOutput> evaluate_policies(const MdpProblem& problem, const std::vector<std::vector<int>>& choices,
                                            const SolveOptions& options, bool keep_stationary = false);

// One worker's state distribution moved one decision forward under fixed
// policies of `problem` (compiler/transient_expectation.h): the transition
// tables built once, each policy's step laid out when added. CPU only.
class PolicySteps {
 public:
  explicit PolicySteps(const MdpProblem& problem);
  ~PolicySteps();
  PolicySteps(const PolicySteps&) = delete;
  PolicySteps& operator=(const PolicySteps&) = delete;
  // A choice vector (as SolverOutput::choice); returns its id for step().
  int add(const std::vector<int>& choice);
  // out = P_choice^T in, renormalised to sum 1 (mdp-spec 4.3).
  void step(int id, const std::vector<double>& in, std::vector<double>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<Solver> make_cpu_solver();

}  // namespace lull::compiler
