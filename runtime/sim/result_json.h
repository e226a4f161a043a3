#pragma once
// Writing a simulation's result: the JSON report of `lull simulate` and the
// per-second timeline CSV.
#include <string>

#include "runtime/core/policy_table.h"
#include "runtime/sim/simulator.h"

namespace lull::sim {

struct RunInfo {
  std::string policies_path;
  std::string trace;
  std::string replay;
  std::string arrivals;
  std::string latency;
  std::uint64_t seed = 0;
};

// The simulator's JSON text: a quoted, escaped string and a number (%.9g).
std::string json_quoted(const std::string& s);
std::string json_num(double v);

std::string result_to_json(const SimResult& r, const core::PolicyTable& table, const RunInfo& info);
std::string timeline_to_csv(const SimResult& r);

}  // namespace lull::sim
