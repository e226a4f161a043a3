#pragma once
// The runtime's immutable view of a compiled policy set: plain flat arrays,
// no protobuf. Built once by policy_loader.cc and only read afterwards, so
// any number of workers may share it without locks.
#include <cstdint>
#include <string>
#include <vector>

#include "schema/arrival_process.h"

namespace lull::core {

// One decision: serve `batch` earliest-deadline queries on `model`.
// batch == 0 marks a state the table does not cover (the selector falls back).
struct Action {
  std::uint16_t model = 0;
  std::uint16_t batch = 0;
};

struct ModelInfo {
  std::string name;
  double accuracy = 0;             // fraction in [0, 1]
  std::vector<double> latency_us;  // index b-1 holds lat(m, b), b = 1..N+1
};

// One compiled policy: the per-worker action table for one central load.
struct CompiledPolicy {
  double load_qps = 0;
  int max_queue = 0;                  // N
  std::vector<double> slack_grid_us;  // T_0 = 0 < T_1 < ... < T_J
  // States n >= 1 in order (1,0),(1,1),...,(N,J), then F: N*(J+1)+1 entries.
  std::vector<Action> actions;
  double expected_accuracy = 0;        // per satisfied query
  double expected_violation_rate = 0;  // fraction of served queries

  int grid_size() const { return static_cast<int>(slack_grid_us.size()); }  // J+1
};

struct PolicyTable {
  std::string task;
  std::int64_t slo_us = 0;
  int workers = 0;
  double percentile = 0;                 // of the compiled latencies (0: unknown)
  ArrivalProcess arrivals;               // the process every policy was compiled for
  std::vector<ModelInfo> models;         // index = model id; model 0 is the fallback
  std::vector<CompiledPolicy> policies;  // strictly ascending load_qps

  std::vector<double> loads_qps() const {
    std::vector<double> loads;
    for (const auto& p : policies) loads.push_back(p.load_qps);
    return loads;
  }
};

}  // namespace lull::core
