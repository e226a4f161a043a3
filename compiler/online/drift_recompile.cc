// Recompiling a served set from observed latencies (why: see drift_recompile.h).
#include "compiler/online/drift_recompile.h"

#include <algorithm>
#include <stdexcept>

#include "compiler/compile_sweep.h"
#include "compiler/emit/recorded_spec.h"
#include "compiler/solver/solver_registry.h"

namespace lull::compiler {

namespace {
// The spec the set records (compiler/emit/recorded_spec.h), on the CPU solver;
// the profiles are the observed latencies, named so in errors.
CompileSpec spec_of(const schema::PolicySet& set) {
  return recorded_compile_spec(set, {"(latencies observed while serving)", "", ""}, "cpu");
}
}  // namespace

ReducedProfiles profiles_with_latencies(const schema::PolicySet& set,
                                        const std::vector<std::vector<double>>& latency_us) {
  if (latency_us.size() != static_cast<size_t>(set.models_size()))
    throw std::invalid_argument("latencies for " + std::to_string(latency_us.size()) + " models, the set has " +
                                std::to_string(set.models_size()));
  const size_t sizes = static_cast<size_t>(spec_of(set).mdp.max_queue) + 1;
  ReducedProfiles out;
  out.task = set.task();
  out.provenance = set.provenance() + "; recompiled from latencies observed while serving";
  for (int m = 0; m < set.models_size(); ++m) {
    const auto& lat = latency_us[static_cast<size_t>(m)];
    if (lat.size() < sizes)
      throw std::invalid_argument("model " + set.models(m).name() + ": latencies for " + std::to_string(lat.size()) +
                                  " batch sizes, N+1 = " + std::to_string(sizes) + " needed");
    out.models.push_back({set.models(m).name(), set.models(m).accuracy(), {lat.begin(), lat.begin() + sizes}});
  }
  std::stable_sort(out.models.begin(), out.models.end(),
                   [](const ModelTable& a, const ModelTable& b) { return a.lat_us(1) < b.lat_us(1); });
  return out;
}

ReducedProfiles profiles_of(const schema::PolicySet& set) {
  std::vector<std::vector<double>> latency_us;
  for (const auto& m : set.models()) latency_us.emplace_back(m.latency_us().begin(), m.latency_us().end());
  return profiles_with_latencies(set, latency_us);
}

schema::PolicySet recompile_with_latencies(const schema::PolicySet& set,
                                           const std::vector<std::vector<double>>& latency_us) {
  const CompileSpec spec = spec_of(set);
  validate_compile_spec(spec);
  SweepRequest request{profiles_with_latencies(set, latency_us), spec};
  check_slo_feasible(request.profiles, spec.mdp.slo_us);
  auto solver = make_solver("cpu", nullptr);
  return run_sweep(request, *solver).set;
}

}  // namespace lull::compiler
