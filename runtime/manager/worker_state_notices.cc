#include "runtime/manager/worker_state_notices.h"

#include <utility>

namespace lull::manager {

void WorkerStateNotices::set_handler(WorkerStateHandler handler) {
  std::lock_guard<std::mutex> lock(deliver_mu_);
  handler_ = std::move(handler);
}

void WorkerStateNotices::queue(std::vector<WorkerInfo>& changed) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  for (auto& c : changed) pending_.push_back(std::move(c));
  changed.clear();
}

void WorkerStateNotices::deliver() {
  std::lock_guard<std::mutex> lock(deliver_mu_);
  std::vector<WorkerInfo> batch;
  {
    std::lock_guard<std::mutex> q(queue_mu_);
    batch.swap(pending_);
  }
  if (handler_)
    for (const auto& info : batch) handler_(info);
}

}  // namespace lull::manager
