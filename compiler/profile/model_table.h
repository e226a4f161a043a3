#pragma once
// The compiler's view of a profile set after reduction: one latency per batch
// size (mdp-spec 1.1), models ordered fastest first.
#include <string>
#include <vector>

namespace lull::compiler {

struct ModelTable {
  std::string name;
  double accuracy = 0;             // fraction in [0, 1]
  std::vector<double> latency_us;  // index b-1 holds lat(m, b), b = 1..N+1
  double memory_mb = 0;            // one loaded copy on a worker; 0 when not measured
  double lat_us(int batch) const { return latency_us[static_cast<std::size_t>(batch - 1)]; }
};

struct ReducedProfiles {
  std::string task;
  std::string provenance;
  bool synthetic = false;
  std::vector<ModelTable> models;  // fastest at batch 1 first; model 0 is the fallback
};

}  // namespace lull::compiler
