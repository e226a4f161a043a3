#pragma once
// Batch latency in the simulator: deterministic at the policy set's compiled
// percentile (the paper's simulator), or drawn from raw profile samples.
// Batches above N+1 (only the fallback serving a long queue) extend with the
// least-squares line over batches 1..N, as the reference does (mdp-spec 8).
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "runtime/core/policy_table.h"
#include "runtime/sim/raw_profiles.h"

namespace lull::sim {

class LatencyModel {
 public:
  virtual ~LatencyModel() = default;
  virtual std::int64_t batch_latency_us(int model, int batch) = 0;
};

// lat(m, b) from the policy set (b = 1..N+1); beyond N+1, the least-squares
// line latency ~ batch over b = 1..N.
double table_latency_us(const core::ModelInfo& model, int batch);

class CompiledLatency final : public LatencyModel {
 public:
  explicit CompiledLatency(const core::PolicyTable& table) : table_(table) {}
  std::int64_t batch_latency_us(int model, int batch) override;

 private:
  const core::PolicyTable& table_;
};

// Draws uniformly among the measured samples of (model, batch). A batch size
// that was not profiled draws from the nearest profiled batch below it (above
// when none is below) and scales the draw by the ratio of compiled latencies,
// keeping the measured spread around the compiled table.
class SampledLatency final : public LatencyModel {
 public:
  SampledLatency(const core::PolicyTable& table, const RawProfiles& profiles, std::uint64_t seed);
  std::int64_t batch_latency_us(int model, int batch) override;

 private:
  struct Source {
    const std::vector<double>* samples = nullptr;
    double scale = 1;
  };
  const core::PolicyTable& table_;
  std::vector<std::vector<Source>> sources_;  // [model][batch-1], batch 1..N+1
  std::mt19937_64 rng_;
};

}  // namespace lull::sim
