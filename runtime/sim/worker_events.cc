#include "runtime/sim/worker_events.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/sim/number_field.h"
#include "schema/input_limits.h"
#include "schema/plan_schedule.h"

namespace lull::sim {
namespace {

double number(const std::string& s, const std::string& what) { return parse_number_field(s, what); }

std::int64_t seconds_to_us(double s, const std::string& what) {
  if (!(s >= 0 && s <= limits::kMaxTraceSeconds))
    throw std::invalid_argument(what + " must be in 0.." + std::to_string(static_cast<int>(limits::kMaxTraceSeconds)) +
                                " s");
  return static_cast<std::int64_t>(std::llround(s * 1e6));
}

int whole(double v, int lo, int hi, const std::string& what) {
  if (!(v >= lo && v <= hi) || v != std::floor(v))
    throw std::invalid_argument(what + " must be a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
  return static_cast<int>(v);
}

}  // namespace

std::vector<WorkerEvent> parse_fail(const std::string& text) {
  const auto at = text.find('@'), colon = text.find(':', at == std::string::npos ? 0 : at);
  if (at == std::string::npos || colon == std::string::npos)
    throw std::invalid_argument("--fail '" + text + "': expected WORKER@T:DURATION (seconds)");
  const int worker = whole(number(text.substr(0, at), "--fail WORKER"), 0, limits::kMaxWorkers - 1, "--fail WORKER");
  const std::int64_t t = seconds_to_us(number(text.substr(at + 1, colon - at - 1), "--fail T"), "--fail T");
  const double d = number(text.substr(colon + 1), "--fail DURATION");
  if (!(d > 0)) throw std::invalid_argument("--fail '" + text + "': DURATION must be positive");
  const std::int64_t back = seconds_to_us(d, "--fail DURATION") + t;
  return {WorkerEvent{t, WorkerEvent::Kind::kFail, worker}, WorkerEvent{back, WorkerEvent::Kind::kRecover, worker}};
}

WorkerEvent parse_workers_at(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw std::invalid_argument("--workers-at '" + text + "': expected T:K");
  const std::int64_t t = seconds_to_us(number(text.substr(0, colon), "--workers-at T"), "--workers-at T");
  const int k = whole(number(text.substr(colon + 1), "--workers-at K"), 1, limits::kMaxWorkers, "--workers-at K");
  return WorkerEvent{t, WorkerEvent::Kind::kPoolSize, k};
}

std::vector<WorkerEvent> read_workers_schedule(const std::string& path) {
  std::vector<PlanScheduleEntry> schedule;
  try {
    schedule = read_plan_schedule(path);
  } catch (const PlanFileError& e) {
    throw std::invalid_argument(e.what());
  }
  std::vector<WorkerEvent> out;
  for (std::size_t i = 0; i < schedule.size(); ++i) {
    const std::string at = path + ": schedule[" + std::to_string(i) + "]";
    out.push_back(WorkerEvent{seconds_to_us(schedule[i].start_s, at + ".start_s"), WorkerEvent::Kind::kPoolSize,
                              whole(schedule[i].workers, 1, limits::kMaxWorkers, at + ".workers")});
  }
  return out;
}

void sort_worker_events(std::vector<WorkerEvent>* events) {
  std::stable_sort(events->begin(), events->end(),
                   [](const WorkerEvent& a, const WorkerEvent& b) { return a.time_us < b.time_us; });
}

int workers_named(const std::vector<WorkerEvent>& events) {
  int n = 0;
  for (const auto& e : events) n = std::max(n, e.kind == WorkerEvent::Kind::kPoolSize ? e.value : e.value + 1);
  return n;
}

}  // namespace lull::sim
