#include "compiler/profile/profile_interpolation.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "compiler/profile/profile_reduction.h"

namespace lull::compiler {

std::string interpolated_model_name(double accuracy) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "interp_%.4f", accuracy);
  return buf;
}

std::vector<ModelTable> interpolate_pareto_front(const std::vector<ModelTable>& models, double step) {
  if (!(step > 0)) throw std::invalid_argument("interpolation step must be > 0 (got " + std::to_string(step) + ")");
  for (const auto& m : models)
    if (m.latency_us.size() != models.front().latency_us.size())
      throw std::invalid_argument("model '" + m.name + "' has a latency table of a different length");
  std::vector<ModelTable> front;
  for (int i : pareto_front(models)) front.push_back(models[i]);
  std::stable_sort(front.begin(), front.end(), [](const ModelTable& a, const ModelTable& b) {
    return a.accuracy < b.accuracy || (a.accuracy == b.accuracy && a.lat_us(1) < b.lat_us(1));
  });

  std::set<std::string> names;
  for (const auto& m : models) names.insert(m.name);
  std::vector<ModelTable> out = models;
  const double guard = 1e-9;  // a step that lands on the upper model adds no copy of it
  for (std::size_t i = 0; i + 1 < front.size(); ++i) {
    const ModelTable& lo = front[i];
    const ModelTable& hi = front[i + 1];
    const double span = hi.accuracy - lo.accuracy;
    if (!(span > guard)) continue;
    for (int k = 1;; ++k) {
      const double acc = lo.accuracy + k * step;  // k * step, not a running sum: no drift
      if (acc >= hi.accuracy - guard) break;
      const double w = (acc - lo.accuracy) / span;
      ModelTable t;
      t.name = interpolated_model_name(acc);
      if (!names.insert(t.name).second)
        throw std::invalid_argument("interpolated model name '" + t.name + "' is already taken; use a larger step");
      t.accuracy = acc;
      t.latency_us.resize(lo.latency_us.size());
      for (std::size_t b = 0; b < t.latency_us.size(); ++b)
        t.latency_us[b] = (1 - w) * lo.latency_us[b] + w * hi.latency_us[b];
      out.push_back(std::move(t));
    }
  }
  // Fastest first, as everywhere in the compiler (model 0 is the fallback).
  std::stable_sort(out.begin(), out.end(),
                   [](const ModelTable& a, const ModelTable& b) { return a.lat_us(1) < b.lat_us(1); });
  return out;
}

schema::ProfileSet interpolate_profile_set(const schema::ProfileSet& set, const InterpolationOptions& options,
                                           const std::string& where) {
  if (options.profiled_batches < 1) throw std::invalid_argument("profiled batch sizes must be >= 1");
  ReductionOptions ro;
  ro.percentile = options.percentile;
  ro.models = options.models;
  ro.keep_all_models = true;
  const ReducedProfiles reduced = reduce_profiles(set, ro, options.profiled_batches, where);
  const auto all = interpolate_pareto_front(reduced.models, options.step);

  std::map<std::string, const schema::ModelProfile*> originals;
  for (const auto& m : set.models()) originals[m.name()] = &m;
  std::set<std::string> chosen;
  for (const auto& m : reduced.models) chosen.insert(m.name);

  schema::ProfileSet out;
  out.set_task(set.task());
  out.set_synthetic(true);
  char how[160];
  std::snprintf(how, sizeof how,
                "synthetic: %zu models interpolated linearly along the accuracy/latency Pareto front of %zu models "
                "in %.4g accuracy steps, latencies at p%g; ",
                all.size() - reduced.models.size(), reduced.models.size(), options.step, options.percentile);
  out.set_provenance(how + (set.provenance().empty() ? std::string("originals from ") + where : set.provenance()));
  for (const auto& t : all) {
    if (chosen.count(t.name)) {
      *out.add_models() = *originals.at(t.name);  // kept exactly, raw samples included
      continue;
    }
    auto* m = out.add_models();
    m->set_name(t.name);
    m->set_accuracy(t.accuracy);
    for (int b = 1; b <= options.profiled_batches; ++b) {
      auto* l = m->add_latencies();
      l->set_batch(static_cast<unsigned>(b));
      l->set_latency_s(t.lat_us(b) / 1e6);
    }
  }
  return out;
}

}  // namespace lull::compiler
