#include "runtime/core/fifo_dispatcher.h"

#include <algorithm>
#include <stdexcept>

namespace lull::core {
FifoDispatcher::FifoDispatcher(const PolicyTable& table, std::vector<BaselineChoice> plan, Clock& clock,
                               Backend& backend, const SchedulerOptions& options)
    : Scheduler(table.loads_qps(), clock, &backend, options),
      plan_(std::move(plan)),
      central_(table.slo_us, table.workers) {
  if (plan_.size() != table.policies.size())
    throw std::invalid_argument("baseline plan needs one choice per compiled load");
  for (const auto& c : plan_)
    if (c.model < 0 || c.model >= static_cast<int>(table.models.size()) || c.max_batch < 1)
      throw std::invalid_argument("baseline plan names a missing model or a batch below 1");
  for (int w = table.workers - 1; w >= 0; --w) idle_.push_back(w);
}

void FifoDispatcher::on_arrival(QueryId id) {
  const std::int64_t now = clock_.now_us();
  note_arrival(now);
  queue_.push_back(central_.stamp(id, now));
  dispatch_idle();
}

void FifoDispatcher::dispatch_idle() {
  while (!idle_.empty() && !queue_.empty()) {
    const int w = idle_.back();
    idle_.pop_back();
    const int grid_point = current_grid_point();
    const BaselineChoice& c = plan_[grid_point];
    const int b = std::min<int>(c.max_batch, static_cast<int>(queue_.size()));
    request_.worker = w;
    request_.model = c.model;
    request_.queries.clear();
    for (int i = 0; i < b; ++i) {
      request_.queries.push_back(queue_.front().id);
      queue_.pop_front();
    }
    GridUsage& u = usage_[grid_point];
    ++u.decisions;
    u.queries += static_cast<std::uint64_t>(b);
    backend_->start_batch(request_);
  }
}

void FifoDispatcher::handle_done(const BatchResult& r) {
  idle_.push_back(r.worker);
  notify_done(r);
  dispatch_idle();
}

}  // namespace lull::core
