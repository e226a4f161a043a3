#include "compiler/online/online_compiler.h"

#include <omp.h>

#include <chrono>
#include <stdexcept>

#include "compiler/compile_inputs.h"
#include "compiler/compile_sweep.h"
#include "compiler/solver/solver_registry.h"

namespace lull::compiler {

CompileSpec spec_from_policy_set(const schema::PolicySet& set, ProfileInputs inputs, const std::string& device) {
  if (set.policies_size() == 0) throw std::invalid_argument("policy set holds no policy to take compile settings from");
  const schema::PolicyInputs& in = set.policies(0).inputs();
  CompileSpec spec;
  spec.inputs = std::move(inputs);
  spec.inputs.task = set.task();
  spec.reduction.percentile = in.percentile();
  for (const auto& m : set.models()) spec.reduction.models.push_back(m.name());
  spec.mdp.slo_us = set.slo_ms() * 1000;
  spec.mdp.workers = static_cast<int>(set.workers());
  spec.mdp.max_queue = static_cast<int>(in.max_queue());
  switch (in.discretization()) {
    case schema::FLD: spec.mdp.discretization = Discretization::kFld; break;
    case schema::MD: spec.mdp.discretization = Discretization::kMd; break;
    default: throw std::invalid_argument("policies[0].inputs.discretization: not recorded; cannot compile a matching policy");
  }
  spec.mdp.intervals = static_cast<int>(in.intervals());
  switch (in.batching()) {
    case schema::MAXIMAL: spec.mdp.batching = Batching::kMaximal; break;
    case schema::VARIABLE: spec.mdp.batching = Batching::kVariable; break;
    default: throw std::invalid_argument("policies[0].inputs.batching: not recorded; cannot compile a matching policy");
  }
  if (in.horizon() > 0) spec.solve.horizon = static_cast<int>(in.horizon());
  spec.loads_qps = {in.load_qps()};
  spec.device = device;
  return spec;
}

OnlineCompiler::OnlineCompiler(const CompileSpec& spec, std::ostream* log) : spec_(spec) {
  profiles_ = load_compile_inputs(spec_).profiles;
  solver_ = make_solver(spec_.device, log);
}

OnlineCompiler::~OnlineCompiler() = default;

schema::PolicySet OnlineCompiler::compile(int workers, double load_qps) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_pair(workers, load_qps);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  const auto t0 = std::chrono::steady_clock::now();
  // One thread (this one): an online compilation must not take the cores
  // serving runs on, and a single 9-model policy is too small to gain from
  // threads on a busy machine (measured: half the CPU time, lower wall time;
  // docs/benchmarks.md). The setting is this thread's and restored after.
  struct OneThread {
    int before = omp_get_max_threads();
    OneThread() { omp_set_num_threads(1); }
    ~OneThread() { omp_set_num_threads(before); }
  } one_thread;
  CompileSpec spec = spec_;
  spec.mdp.workers = workers;
  spec.loads_qps = {load_qps};
  validate_compile_spec(spec);
  SweepResult result = run_sweep(SweepRequest{profiles_, spec}, *solver_);
  last_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++compilations_;
  return cache_.emplace(key, std::move(result.set)).first->second;
}

}  // namespace lull::compiler
