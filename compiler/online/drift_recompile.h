#pragma once
// `lull serve --recompile-on-drift`'s compilation: the served set compiled
// again with the latencies observed while serving (the profile corrected by
// them) and every other setting the set records (recorded_compile_spec), on
// the CPU solver. The serving side that runs it in the background and
// writes the result is runtime/session/drift_recompiler (the CLI passes this
// function to the Server).
#include <vector>

#include "compiler/compile_spec.h"
#include "compiler/profile/model_table.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

// The set's models with these latencies (per model, lat(m, b) for b = 1..;
// cut to the set's N+1), fastest at batch 1 first, as the compiler orders them.
ReducedProfiles profiles_with_latencies(const schema::PolicySet& set,
                                        const std::vector<std::vector<double>>& latency_us);

// The set's own models and latencies as profiles (a recompiled set: the
// latencies observed while serving), for online compilation after a swap.
ReducedProfiles profiles_of(const schema::PolicySet& set);

// Compiles the set again on the CPU solver with these latencies. Throws
// std::invalid_argument when the SLO is no longer feasible.
schema::PolicySet recompile_with_latencies(const schema::PolicySet& set,
                                           const std::vector<std::vector<double>>& latency_us);

}  // namespace lull::compiler
