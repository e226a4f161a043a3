#include "compiler/compile_inputs.h"

#include <chrono>
#include <filesystem>
#include <optional>

#include "compiler/compile_sweep.h"
#include "compiler/profile/artifact_import.h"
#include "compiler/profile/profile_source.h"
#include "compiler/profile/reduced_artifact_cache.h"
#include "schema/latency_limit.h"

namespace lull::compiler {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The artifact folder's set from the cache, when it holds the folder as it
// is now and every sample is within the SLO's bound; otherwise the files are
// read (and a bad sample is reported by name).
std::optional<schema::ProfileSet> cached_artifact_set(const ArtifactReductionCache& cache, const CompileSpec& spec) {
  const auto models = cache.load();
  if (!models) return std::nullopt;
  for (const auto& m : *models)
    for (const auto& [b, r] : m.by_batch)
      if (!latency_problem(r.max_s, spec.mdp.slo_us / 1000).empty()) return std::nullopt;
  const auto& in = spec.inputs;
  return import_reduced_artifact(*models, in.path, in.accuracy_json, in.task);
}

}  // namespace

CompileInputs load_compile_inputs(const CompileSpec& spec) {
  validate_compile_spec(spec);
  const auto& in = spec.inputs;
  CompileInputs out;
  auto t = Clock::now();
  const bool artifact = !in.accuracy_json.empty() && std::filesystem::is_directory(in.path);
  const ArtifactReductionCache cache(artifact ? spec.profile_cache_dir : "", in.path, spec.reduction.models,
                                     spec.reduction.percentile, spec.profile_cache_now_ns);
  auto raw = cached_artifact_set(cache, spec);
  const bool hit = raw.has_value();
  // Named models: the other models' files are not read (default pruning
  // needs every model's latencies).
  if (!hit) raw = load_profile_source(in.path, in.accuracy_json, in.task, spec.reduction.models);
  out.seconds.read = since(t);
  t = Clock::now();
  validate_profile_set(*raw, in.path, spec.mdp.slo_us / 1000);
  out.seconds.validate = since(t);
  if (!hit) cache.store(*raw);
  t = Clock::now();
  out.profiles = reduce_valid_profiles(*raw, spec.reduction, spec.mdp.max_queue, in.path);
  out.seconds.reduce = since(t);
  check_slo_feasible(out.profiles, spec.mdp.slo_us);
  return out;
}

}  // namespace lull::compiler
