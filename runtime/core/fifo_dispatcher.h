#pragma once
// The baselines' scheduler: one central FIFO queue; an idle worker takes up to
// the plan's maximum batch from its head and runs it on the plan's model for
// the current load grid point (switching like lull, on grid-point changes).
#include <deque>
#include <vector>

#include "runtime/core/baseline_plan.h"
#include "runtime/core/central_queue.h"
#include "runtime/core/policy_table.h"
#include "runtime/core/scheduler.h"

namespace lull::core {

class FifoDispatcher final : public Scheduler {
 public:
  // `plan` has one choice per compiled load of `table`.
  FifoDispatcher(const PolicyTable& table, std::vector<BaselineChoice> plan, Clock& clock, Backend& backend,
                 const SchedulerOptions& options = {});
  void on_arrival(QueryId id) override;
  int queued() const { return static_cast<int>(queue_.size()); }

 private:
  void handle_done(const BatchResult& r) override;
  void dispatch_idle();

  std::vector<BaselineChoice> plan_;
  CentralQueue central_;
  std::deque<Query> queue_;
  std::vector<int> idle_;  // idle workers, used as a stack
  BatchRequest request_;
};

}  // namespace lull::core
