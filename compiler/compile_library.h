#pragma once
// A policy library: one sweep per worker count (fixed or adaptive load grid),
// sharing the reduced profiles, packed into schema::PolicyLibrary so the
// runtime can pick a policy by (workers available, load).
#include <functional>
#include <vector>

#include "compiler/adaptive_loads.h"
#include "compiler/compile_sweep.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

struct LibrarySweep {
  int workers = 0;
  SweepResult sweep;
  int rounds = 0;  // adaptive grid: bisection rounds; 0 for a fixed grid
};

// (index of the worker count, how many counts, loads done for it, loads so far for it, the last load's report)
using LibraryProgress = std::function<void(int set, int sets, int done, int total, const LoadReport& last)>;

// One sweep per spec (ascending worker counts expected; the specs differ only
// in mdp.workers). With `adaptive` the loads come from the adaptive grid.
// The specs in the order compile_library compiles them and reports progress
// by (ascending worker counts; stable, so equal counts keep their order).
std::vector<CompileSpec> in_library_order(std::vector<CompileSpec> specs);

std::vector<LibrarySweep> compile_library(const ReducedProfiles& profiles, const std::vector<CompileSpec>& specs,
                                          const AdaptiveLoads* adaptive, Solver& solver,
                                          const LibraryProgress& progress = nullptr);

// The sweeps' sets, ascending by workers, in one library message (unsealed;
// write_policy_library seals it).
schema::PolicyLibrary policy_library_of(const std::vector<LibrarySweep>& sweeps);

}  // namespace lull::compiler
