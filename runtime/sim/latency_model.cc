#include "runtime/sim/latency_model.h"

#include <cmath>
#include <stdexcept>

namespace lull::sim {

double table_latency_us(const core::ModelInfo& model, int batch) {
  const auto& lat = model.latency_us;
  const int last = static_cast<int>(lat.size());  // N+1
  if (batch <= last) return lat[batch - 1];
  const int n = last - 1;
  if (n < 2) {  // N = 1 (or a 1-entry table): no line to fit; continue the last step
    const double step = last >= 2 ? lat[last - 1] - lat[last - 2] : lat[0];
    return lat[last - 1] + (batch - last) * step;
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int b = 1; b <= n; ++b) {
    sx += b;
    sy += lat[b - 1];
    sxx += static_cast<double>(b) * b;
    sxy += b * lat[b - 1];
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / n;
  return intercept + slope * batch;
}

std::int64_t CompiledLatency::batch_latency_us(int model, int batch) {
  return static_cast<std::int64_t>(std::llround(table_latency_us(table_.models[model], batch)));
}

SampledLatency::SampledLatency(const core::PolicyTable& table, const RawProfiles& profiles, std::uint64_t seed)
    : table_(table), rng_(seed) {
  for (const auto& m : table.models) {
    const auto it = profiles.find(m.name);
    if (it == profiles.end() || it->second.empty())
      throw std::runtime_error("profiles have no samples for model " + m.name + " of the policy set");
    const auto& by_batch = it->second;
    std::vector<Source> row;
    for (int b = 1; b <= static_cast<int>(m.latency_us.size()); ++b) {
      auto at = by_batch.upper_bound(b);  // first profiled batch > b
      int b0;
      if (at != by_batch.begin())
        b0 = std::prev(at)->first;  // largest profiled <= b
      else
        b0 = at->first;
      const double scale = b0 == b ? 1.0 : table_latency_us(m, b) / table_latency_us(m, b0);
      row.push_back(Source{&by_batch.at(b0), scale});
    }
    sources_.push_back(std::move(row));
  }
}

std::int64_t SampledLatency::batch_latency_us(int model, int batch) {
  const auto& row = sources_[model];
  const int top = static_cast<int>(row.size());
  const Source& src = row[std::min(batch, top) - 1];
  std::uniform_int_distribution<std::size_t> pick(0, src.samples->size() - 1);
  double lat = (*src.samples)[pick(rng_)] * src.scale;
  if (batch > top) lat *= table_latency_us(table_.models[model], batch) / table_latency_us(table_.models[model], top);
  return static_cast<std::int64_t>(std::llround(lat));
}

}  // namespace lull::sim
