#include "compiler/compile_library.h"

#include <algorithm>

namespace lull::compiler {

std::vector<CompileSpec> in_library_order(std::vector<CompileSpec> specs) {
  std::stable_sort(specs.begin(), specs.end(),
                   [](const CompileSpec& a, const CompileSpec& b) { return a.mdp.workers < b.mdp.workers; });
  return specs;
}

std::vector<LibrarySweep> compile_library(const ReducedProfiles& profiles, const std::vector<CompileSpec>& specs,
                                          const AdaptiveLoads* adaptive, Solver& solver,
                                          const LibraryProgress& progress) {
  const std::vector<CompileSpec> sorted = in_library_order(specs);
  std::vector<LibrarySweep> out;
  const int sets = static_cast<int>(sorted.size());
  for (int s = 0; s < sets; ++s) {
    const SweepRequest req{profiles, sorted[static_cast<std::size_t>(s)]};
    const auto each = [&](int done, int total, const LoadReport& last) {
      if (progress) progress(s, sets, done, total, last);
    };
    LibrarySweep ls;
    ls.workers = req.spec.mdp.workers;
    if (adaptive) {
      AdaptiveSweep a = run_adaptive_sweep(req, *adaptive, solver, each);
      ls.sweep = std::move(a.sweep);
      ls.rounds = a.rounds;
    } else {
      ls.sweep = run_sweep(req, solver, each);
    }
    out.push_back(std::move(ls));
  }
  return out;
}

schema::PolicyLibrary policy_library_of(const std::vector<LibrarySweep>& sweeps) {
  schema::PolicyLibrary lib;
  for (const auto& s : sweeps) *lib.add_sets() = s.sweep.set;
  return lib;
}

}  // namespace lull::compiler
