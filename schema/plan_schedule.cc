#include "schema/plan_schedule.h"

#include <cmath>

#include "schema/json_reader.h"

namespace lull {

std::vector<PlanScheduleEntry> read_plan_schedule(const std::string& path) {
  json::JsonFileReader reader;
  const simdjson::dom::element root = json::parse_file_or_throw<PlanFileError>(reader, path, "plan JSON");
  simdjson::dom::array schedule;
  if (root["schedule"].get(schedule))
    throw PlanFileError(path + ": schedule: missing or not a list (expected the output of lull plan --trace)");
  std::vector<PlanScheduleEntry> out;
  std::size_t i = 0;
  for (simdjson::dom::element entry : schedule) {
    const std::string at = path + ": schedule[" + std::to_string(i++) + "]";
    PlanScheduleEntry e;
    simdjson::dom::element v;
    double workers = 0;
    if (entry["start_s"].get(v) || !json::to_double(v, &e.start_s) || !std::isfinite(e.start_s))
      throw PlanFileError(at + ".start_s: missing or not a number");
    if (entry["workers"].get(v) || !json::to_double(v, &workers) || workers != std::floor(workers) || workers < 1)
      throw PlanFileError(at + ".workers: missing or not a whole number >= 1");
    if (!entry["load_qps"].get(v) && !json::to_double(v, &e.load_qps))
      throw PlanFileError(at + ".load_qps: not a number");
    e.workers = workers > 1e9 ? 1000000000 : static_cast<int>(workers);
    out.push_back(e);
  }
  if (out.empty()) throw PlanFileError(path + ": schedule: the list is empty");
  return out;
}

}  // namespace lull
