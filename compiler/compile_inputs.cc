#include "compiler/compile_inputs.h"

#include <chrono>

#include "compiler/compile_sweep.h"
#include "compiler/profile/profile_source.h"

namespace lull::compiler {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

CompileInputs load_compile_inputs(const CompileSpec& spec) {
  validate_compile_spec(spec);
  const auto& in = spec.inputs;
  CompileInputs out;
  auto t = Clock::now();
  // Named models: the other models' files are not read (default pruning
  // needs every model's latencies).
  const auto raw = load_profile_source(in.path, in.accuracy_json, in.task, spec.reduction.models);
  out.seconds.read = since(t);
  t = Clock::now();
  validate_profile_set(raw, in.path, spec.mdp.slo_us / 1000);
  out.seconds.validate = since(t);
  t = Clock::now();
  out.profiles = reduce_valid_profiles(raw, spec.reduction, spec.mdp.max_queue, in.path);
  out.seconds.reduce = since(t);
  check_slo_feasible(out.profiles, spec.mdp.slo_us);
  return out;
}

}  // namespace lull::compiler
