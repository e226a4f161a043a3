// Each variant's set compiled over the worker range (why: variant_libraries.h).
#include "compiler/plan/variant_libraries.h"

#include <algorithm>

#include "compiler/plan/memory_subsets.h"

namespace lull::compiler {

std::vector<std::vector<LibrarySweep>> variant_libraries(const VariantPlan& plan, const ReducedProfiles& profiles,
                                                         const std::vector<CompileSpec>& specs, Solver& solver,
                                                         const LibraryProgress& progress) {
  // The other counts, with the plan's load grid (ascending, no repeats).
  std::vector<CompileSpec> rest(specs.begin() + 1, specs.end());
  for (auto& s : rest) {
    std::sort(s.loads_qps.begin(), s.loads_qps.end());
    s.loads_qps.erase(std::unique(s.loads_qps.begin(), s.loads_qps.end()), s.loads_qps.end());
  }
  std::vector<std::vector<LibrarySweep>> out;
  for (const auto& v : plan.variants) {
    std::vector<LibrarySweep> lib{LibrarySweep{specs.front().mdp.workers, v.sweep, 0}};
    for (auto& s : compile_library(restrict_models(profiles, v.models), rest, nullptr, solver, progress))
      lib.push_back(std::move(s));
    out.push_back(std::move(lib));
  }
  return out;
}

}  // namespace lull::compiler
