#pragma once
// The simulator's worker situations, as a time-ordered list of events:
//   --fail WORKER@T:DURATION   worker WORKER fails at T s (its batch in flight
//                              fails and is retried elsewhere) and is back
//                              DURATION s later
//   --workers-at T:K           from T s on, workers 0..K-1 are provisioned
//                              (the others leave after their batch in flight)
//   --workers-schedule PLAN    the `schedule` list of `lull plan`'s JSON,
//                              [{start_s, load_qps, workers}, ...], as
//                              --workers-at start_s:workers for each entry
// Errors throw std::invalid_argument naming the flag (or file and field).
#include <cstdint>
#include <string>
#include <vector>

namespace lull::sim {

struct WorkerEvent {
  enum class Kind { kFail, kRecover, kPoolSize };
  std::int64_t time_us = 0;
  Kind kind = Kind::kPoolSize;
  int value = 0;  // the worker (fail, recover) or the pool size
};

std::vector<WorkerEvent> parse_fail(const std::string& text);  // two events
WorkerEvent parse_workers_at(const std::string& text);
std::vector<WorkerEvent> read_workers_schedule(const std::string& path);

// Sorted by time; at equal times in the order given (stable).
void sort_worker_events(std::vector<WorkerEvent>* events);
// The largest worker index + 1 or pool size any event names (0 if none).
int workers_named(const std::vector<WorkerEvent>& events);

}  // namespace lull::sim
