#pragma once
// The compile specification: every setting of one compilation, stated once,
// grouped by the layer that reads it. The CLI fills it from flags; the input
// stage (compile_inputs), the MDP builder, the solver, and the policy builder
// all read their part of this one value, and the policy records it
// (make_policy). Nothing copies a setting into a second struct.
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/profile/profile_reduction.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {

// Where the profiles come from.
struct ProfileInputs {
  std::string path;           // lull's profile JSON, or a RAMSIS artifact folder
  std::string accuracy_json;  // the accuracy table (percent), for an artifact folder
  std::string task;           // overrides the profile's task when not empty
};

struct CompileSpec {
  ProfileInputs inputs;
  ReductionOptions reduction;     // percentile; chosen models or Pareto pruning
  MdpOptions mdp;                 // SLO, workers K, N, slack grid (FLD D / MD), batching;
                                  // mdp.load_qps is set per policy from loads_qps
  std::vector<double> loads_qps;  // one policy per load
  SolveOptions solve;             // value-iteration horizon, stationary-distribution stopping
  std::string device = "auto";    // solver backend: cpu | cuda | auto
  // An artifact folder's reduced latencies are cached here
  // (profile/reduced_artifact_cache.h); empty: no cache.
  std::string profile_cache_dir;
  // The time (CLOCK_REALTIME ns) the cache judges "changed just now" by; 0:
  // the clock's. Tests set it instead of waiting for files to age.
  std::int64_t profile_cache_now_ns = 0;
};

// Throws std::invalid_argument naming the setting (by its `lull compile` flag)
// for a value outside its range.
void validate_compile_spec(const CompileSpec& spec);

// What the policy records as its solver mode: "reference" when every setting
// is mdp-spec's reference mode (FLD D = 100, maximal batching, N = 32, p95,
// horizon 100), otherwise the settings that differ joined by '+', e.g.
// "md+variable-batching" or "intervals=10+horizon=200".
std::string solver_mode(const CompileSpec& spec);

}  // namespace lull::compiler
