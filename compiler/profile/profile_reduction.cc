#include "compiler/profile/profile_reduction.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "compiler/profile/latency_reduction.h"
#include "schema/input_limits.h"
#include "schema/latency_limit.h"
#include "schema/number_text.h"

namespace lull::compiler {
namespace {

std::string fmt(double v) { return number_text(v); }

std::string ms(double seconds) { return number_text(std::round(seconds * 1e4) / 10); }

// Why a model's fitted line went below zero, for the error: the sample that
// stands furthest above its batch's median (one slow sample tips the OLS
// line), else the measured latencies falling with batch size.
std::string tipping_sample(const schema::ModelProfile& m, const std::map<int, double>& measured_s) {
  double worst = 0;
  std::string named;
  for (const auto& l : m.latencies()) {
    if (l.samples_s_size() < 2) continue;
    const std::vector<double> samples(l.samples_s().begin(), l.samples_s().end());
    const double median = percentile_linear(samples, 50);
    const auto top = std::max_element(samples.begin(), samples.end()) - samples.begin();
    const double ratio = median > 0 ? samples[static_cast<std::size_t>(top)] / median : 0;
    if (ratio > worst) {
      worst = ratio;
      named = "batch " + std::to_string(l.batch()) + ".samples_s[" + std::to_string(top) + "] is " +
              ms(samples[static_cast<std::size_t>(top)]) + " ms against that batch's median " + ms(median) + " ms";
    }
  }
  std::string measured;
  for (const auto& [b, s] : measured_s) measured += (measured.empty() ? "" : ", ") + std::to_string(b) + ": " + ms(s);
  std::string why = "the reduced latencies (batch: ms " + measured +
                    ") fall with batch size, so the line fitted "
                    "through them does";
  if (worst >= 3)
    return why + "; " + named + ", which tips it: measure again (lull profile measures far-out samples again), " +
           "or drop that sample";
  return why + "; profile more batch sizes, or more samples per batch";
}

}  // namespace

void validate_profile_set(const schema::ProfileSet& set, const std::string& where, double slo_ms) {
  auto fail = [&](const std::string& field, const std::string& why) {
    throw ProfileError(where + ": " + field + ": " + why);
  };
  if (set.models_size() == 0) fail("models", "the profile set has no models");
  std::set<std::string> names;
  for (int i = 0; i < set.models_size(); ++i) {
    const auto& m = set.models(i);
    const std::string at = "models[" + std::to_string(i) + "]" + (m.name().empty() ? "" : " (" + m.name() + ")");
    if (m.name().empty()) fail(at + ".name", "is empty");
    if (!names.insert(m.name()).second) fail(at + ".name", "duplicate model name");
    if (!(m.accuracy() >= 0 && m.accuracy() <= 1))
      fail(at + ".accuracy", "must be a fraction in [0, 1] (got " + fmt(m.accuracy()) + ")");
    if (!(std::isfinite(m.memory_mb()) && m.memory_mb() >= 0))
      fail(at + ".memory_mb",
           "must be a finite number of MiB >= 0 (got " + fmt(m.memory_mb()) + "; 0 means not measured)");
    if (m.latencies_size() == 0) fail(at + ".latencies", "the model has no latencies");
    std::set<unsigned> batches;
    for (int k = 0; k < m.latencies_size(); ++k) {
      const auto& l = m.latencies(k);
      const std::string lat = at + ".latencies[" + std::to_string(k) + "]";
      if (l.batch() < 1 || l.batch() > limits::kMaxBatch)
        fail(lat + ".batch",
             "must be in 1.." + std::to_string(limits::kMaxBatch) + " (got " + std::to_string(l.batch()) + ")");
      if (!batches.insert(l.batch()).second)
        fail(lat + ".batch", "batch size " + std::to_string(l.batch()) + " appears twice");
      if (l.samples_s_size() == 0) {
        const std::string why = latency_problem(l.latency_s(), slo_ms);
        if (!why.empty()) fail(lat + ".latency_s", why + "; give samples_s or latency_s");
      }
      for (int s = 0; s < l.samples_s_size(); ++s) {
        const std::string why = latency_problem(l.samples_s(s), slo_ms);
        if (!why.empty()) fail(lat + ".samples_s[" + std::to_string(s) + "]", why);
      }
    }
  }
}

std::vector<int> pareto_front(const std::vector<ModelTable>& models) {
  std::vector<int> keep;
  for (std::size_t i = 0; i < models.size(); ++i) {
    bool dominated = false;
    for (std::size_t k = 0; k < models.size() && !dominated; ++k)
      dominated = k != i && models[k].lat_us(1) < models[i].lat_us(1) && models[i].accuracy <= models[k].accuracy;
    if (!dominated) keep.push_back(static_cast<int>(i));
  }
  return keep;
}

ReducedProfiles reduce_profiles(const schema::ProfileSet& set, const ReductionOptions& opts, int max_queue,
                                const std::string& where) {
  validate_profile_set(set, where);
  return reduce_valid_profiles(set, opts, max_queue, where);
}

ReducedProfiles reduce_valid_profiles(const schema::ProfileSet& set, const ReductionOptions& opts, int max_queue,
                                      const std::string& where) {
  ReducedProfiles out;
  out.task = set.task().empty() ? "default" : set.task();
  out.provenance = set.provenance();
  out.synthetic = set.synthetic();

  std::map<std::string, int> by_name;
  for (int i = 0; i < set.models_size(); ++i) by_name[set.models(i).name()] = i;
  std::vector<int> chosen;
  if (!opts.models.empty()) {
    for (const auto& name : opts.models) {
      const auto it = by_name.find(name);
      if (it == by_name.end()) throw ProfileError(where + ": models: no model named '" + name + "' (--models)");
      chosen.push_back(it->second);
    }
  } else {
    for (int i = 0; i < set.models_size(); ++i) chosen.push_back(i);
  }

  for (int i : chosen) {
    const auto& m = set.models(i);
    std::map<int, double> measured_s;
    for (const auto& l : m.latencies()) {
      const std::vector<double> samples(l.samples_s().begin(), l.samples_s().end());
      measured_s[static_cast<int>(l.batch())] =
          samples.empty() ? l.latency_s() : percentile_linear(samples, opts.percentile);
    }
    ModelTable t;
    t.name = m.name();
    t.accuracy = m.accuracy();
    t.memory_mb = m.memory_mb();
    try {
      t.latency_us = complete_latency_table_us(measured_s, max_queue);
    } catch (const std::exception& e) {
      throw ProfileError(where + ": models[" + std::to_string(i) + "] (" + m.name() + ").latencies: " + e.what());
    }
    for (std::size_t b = 0; b < t.latency_us.size(); ++b)
      if (!(t.latency_us[b] > 0))
        throw ProfileError(where + ": models[" + std::to_string(i) + "] (" + m.name() +
                           ").latencies: the fitted latency for batch " + std::to_string(b + 1) +
                           " is not positive: " + tipping_sample(m, measured_s));
    out.models.push_back(std::move(t));
  }
  // Fastest first: model 0 is the fallback (mdp-spec 1.1 step 5).
  std::stable_sort(out.models.begin(), out.models.end(),
                   [](const ModelTable& a, const ModelTable& b) { return a.lat_us(1) < b.lat_us(1); });
  if (opts.models.empty() && !opts.keep_all_models) {
    std::vector<ModelTable> front;
    for (int i : pareto_front(out.models)) front.push_back(out.models[i]);
    out.models = std::move(front);
  }
  return out;
}

}  // namespace lull::compiler
