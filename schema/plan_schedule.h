#pragma once
// Reading the worker schedule out of a plan JSON (`lull plan --trace ...
// --out PLAN.json`): its `schedule` list of {start_s, load_qps, workers}.
// The simulator replays it (--workers-schedule). JSON parsing stays in
// schema/ (simdjson is this library's private dependency).
#include <stdexcept>
#include <string>
#include <vector>

namespace lull {

struct PlanScheduleEntry {
  double start_s = 0;
  double load_qps = 0;  // 0 when the entry does not give it
  int workers = 0;
};

struct PlanFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws PlanFileError("PATH: schedule[i].field: why") for a file that does
// not parse, a missing or mistyped field, or an empty schedule.
std::vector<PlanScheduleEntry> read_plan_schedule(const std::string& path);

}  // namespace lull
