#pragma once
// `lull plan variants --workers A:B:S`: model variants for an autoscaled pool
// The variants (their model sets and the loads they serve from)
// are picked on the smallest count A, as `lull plan variants --workers A`
// picks them (variant_plan.h); then each variant's set is compiled for every
// worker count of the range, so that each variant is a policy library over
// the same counts as the full set's. `lull serve --autoscale --variant-sets`
// swaps a whole library in at a switch (every worker count at once), and the
// autoscaler sizes the pool with the variant's own capacities. Why A: it is
// the floor, where the pool sits while the load is low, and the most load per
// worker any count of the range sees at a given total load, so a switch to a
// smaller set comes no later than any count would want it (docs/operators-guide.md,
// "Variants and autoscaling").
#include <vector>

#include "compiler/compile_library.h"
#include "compiler/plan/variant_plan.h"

namespace lull::compiler {

// One library per variant of `plan` (planned on specs.front()'s worker count
// with `specs.front()`'s loads): its set compiled for every spec (the specs
// differ only in mdp.workers, ascending), the plan's own sweep reused for the
// first. Each library lists its counts ascending.
std::vector<std::vector<LibrarySweep>> variant_libraries(const VariantPlan& plan, const ReducedProfiles& profiles,
                                                         const std::vector<CompileSpec>& specs, Solver& solver,
                                                         const LibraryProgress& progress = nullptr);

}  // namespace lull::compiler
