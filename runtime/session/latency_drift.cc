#include "runtime/session/latency_drift.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lull::session {

LatencyDriftDetector::LatencyDriftDetector(const std::vector<core::ModelInfo>& models, DriftRule rule) : rule_(rule) {
  if (rule_.window < 1) throw std::invalid_argument("drift window must be at least 1 batch");
  if (rule_.min_samples < 1 || rule_.min_samples > rule_.window)
    throw std::invalid_argument("drift min_samples must be in 1..window (" + std::to_string(rule_.window) + ")");
  if (!(rule_.percentile > 0 && rule_.percentile <= 100))
    throw std::invalid_argument("drift percentile must be in (0, 100]");
  if (rule_.plan_percentile == 0) rule_.plan_percentile = rule_.percentile;
  if (!(rule_.plan_percentile > 0 && rule_.plan_percentile <= 100))
    throw std::invalid_argument("drift plan percentile must be in (0, 100]");
  if (!(rule_.tolerance > 0) || !std::isfinite(rule_.tolerance))
    throw std::invalid_argument("drift tolerance must be positive");
  for (std::size_t m = 0; m < models.size(); ++m) {
    const auto& lat = models[m].latency_us;
    pairs_.emplace_back();
    for (std::size_t b = 0; b < lat.size(); ++b)
      pairs_.back().push_back(DriftPair{static_cast<int>(m), static_cast<int>(b + 1), lat[b], 0, 0, 0, false});
    windows_.emplace_back(lat.size());
  }
}

double LatencyDriftDetector::percentile_of(std::vector<double>& values, double percentile) {
  // Nearest rank: the smallest value with at least p% of the window at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(percentile / 100.0 * static_cast<double>(values.size())));
  const auto nth =
      values.begin() + static_cast<std::ptrdiff_t>(std::min(std::max<std::size_t>(rank, 1), values.size()) - 1);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

LatencyDriftDetector::Change LatencyDriftDetector::observe(int model, int batch, double latency_us) {
  if (model < 0 || static_cast<std::size_t>(model) >= pairs_.size() || batch < 1 ||
      static_cast<std::size_t>(batch) > pairs_[model].size() || !(latency_us >= 0) || !std::isfinite(latency_us))
    return Change::kNone;
  DriftPair& p = pairs_[model][batch - 1];
  Window& w = windows_[model][batch - 1];
  if (w.ring.size() < static_cast<std::size_t>(rule_.window)) {
    w.ring.push_back(latency_us);
  } else {
    w.ring[w.next] = latency_us;
    w.next = (w.next + 1) % w.ring.size();
  }
  p.samples = static_cast<int>(w.ring.size());
  if (p.samples < rule_.min_samples) return Change::kNone;
  scratch_.assign(w.ring.begin(), w.ring.end());
  p.observed_us = percentile_of(scratch_, rule_.percentile);
  p.observed_plan_us = percentile_of(scratch_, rule_.plan_percentile);
  const bool over = p.observed_us > p.profiled_us * (1 + rule_.tolerance);
  const bool back = p.observed_us <= p.profiled_us * (1 + rule_.tolerance / 2);
  if (!p.drifting && over) {
    p.drifting = true;
    ++drifting_;
    ++starts_;
    return Change::kStarted;
  }
  if (p.drifting && back) {
    p.drifting = false;
    --drifting_;
    return Change::kEnded;
  }
  return Change::kNone;
}

const DriftPair& LatencyDriftDetector::pair(int model, int batch) const {
  return pairs_.at(static_cast<std::size_t>(model)).at(static_cast<std::size_t>(batch - 1));
}

std::vector<DriftPair> LatencyDriftDetector::judged() const {
  std::vector<DriftPair> out;
  for (const auto& model : pairs_)
    for (const auto& p : model)
      if (p.samples >= rule_.min_samples) out.push_back(p);
  return out;
}

std::vector<std::vector<double>> LatencyDriftDetector::corrected_latency_us() const {
  std::vector<double> model_ratio(pairs_.size(), 0);  // 0: no judged pair
  double any_ratio = 1;
  for (const auto& p : judged()) {
    const double r = p.observed_plan_us / p.profiled_us;
    model_ratio[p.model] = std::max(model_ratio[p.model], r);
    any_ratio = std::max(any_ratio, r);
  }
  std::vector<std::vector<double>> out;
  for (std::size_t m = 0; m < pairs_.size(); ++m) {
    const double scale = model_ratio[m] > 0 ? model_ratio[m] : any_ratio;
    std::vector<double> lat;
    for (const auto& p : pairs_[m]) {
      const double v = p.samples >= rule_.min_samples ? p.observed_plan_us : p.profiled_us * scale;
      lat.push_back(lat.empty() ? v : std::max(v, lat.back()));
    }
    out.push_back(std::move(lat));
  }
  return out;
}

}  // namespace lull::session
