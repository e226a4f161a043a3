#include "compiler/online/online_compiler.h"

#include <omp.h>

#include <chrono>
#include <stdexcept>

#include "compiler/compile_inputs.h"
#include "compiler/compile_sweep.h"
#include "compiler/solver/solver_registry.h"

namespace lull::compiler {

OnlineCompiler::OnlineCompiler(const CompileSpec& spec, std::ostream* log) : spec_(spec) {
  profiles_ = load_compile_inputs(spec_).profiles;
  solver_ = make_solver(spec_.device, log);
}

OnlineCompiler::~OnlineCompiler() = default;

void OnlineCompiler::use_profiles(ReducedProfiles profiles) {
  std::lock_guard<std::mutex> lock(mu_);
  profiles_ = std::move(profiles);
  cache_.clear();
}

schema::PolicySet OnlineCompiler::compile(int workers, double load_qps) {
  return compile(workers, load_qps, spec_.mdp.arrivals);
}

schema::PolicySet OnlineCompiler::compile(int workers, double load_qps, const ArrivalProcess& arrivals) {
  if (cancelled_) throw SolveCancelled();
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_tuple(workers, load_qps, arrival_process_text(arrivals));
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
  spec.mdp.arrivals = arrivals;
  spec.loads_qps = {load_qps};
  spec.solve.cancel = &cancelled_;
  validate_compile_spec(spec);
  SweepResult result = run_sweep(SweepRequest{profiles_, spec}, *solver_);
  last_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++compilations_;
  return cache_.emplace(key, std::move(result.set)).first->second;
}

}  // namespace lull::compiler
