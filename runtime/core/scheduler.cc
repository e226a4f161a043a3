#include "runtime/core/scheduler.h"

namespace lull::core {

Scheduler::Scheduler(std::vector<double> grid_loads_qps, Clock& clock, Backend* backend,
                     const SchedulerOptions& options)
    : clock_(clock),
      backend_(backend),
      usage_(grid_loads_qps.size()),
      monitor_(options.load_window_us, BurstinessEstimator::kDefaultWindow, options.arrival_thinning),
      switcher_(std::move(grid_loads_qps)) {
  if (backend_) backend_->set_completion_handler([this](const BatchResult& r) { handle_done(r); });
}

int Scheduler::note_arrival(std::int64_t now_us) {
  monitor_.record_arrival(now_us);
  last_estimate_qps_ = monitor_.estimate_qps(now_us);
  return switcher_.update(last_estimate_qps_, now_us);
}

}  // namespace lull::core
