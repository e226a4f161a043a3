// Names and counts shared by every worker pool (why: see worker_pool.h).
#include "runtime/manager/worker_pool.h"

namespace lull::manager {

const char* worker_state_name(WorkerState s) {
  switch (s) {
    case WorkerState::kStarting:
      return "starting";
    case WorkerState::kUp:
      return "up";
    case WorkerState::kDraining:
      return "draining";
    case WorkerState::kStopped:
      return "stopped";
    case WorkerState::kFailed:
      return "failed";
  }
  return "?";
}

int count_workers(const std::vector<WorkerInfo>& workers, WorkerState state) {
  int n = 0;
  for (const auto& w : workers) n += w.state == state;
  return n;
}

}  // namespace lull::manager
