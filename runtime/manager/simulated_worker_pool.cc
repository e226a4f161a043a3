// Virtual-time workers (why: see simulated_worker_pool.h).
#include "runtime/manager/simulated_worker_pool.h"

#include <stdexcept>

namespace lull::manager {

SimulatedWorkerPool::SimulatedWorkerPool(const core::Clock& clock, ProvisioningDelay delay, int initial_up)
    : clock_(clock), delay_(std::move(delay)) {
  if (initial_up < 0) throw std::invalid_argument("simulated worker pool: initial_up < 0");
  const std::int64_t now = clock_.now_us();
  for (int i = 0; i < initial_up; ++i) {
    Worker w;
    w.info.id = "sim-" + std::to_string(next_id_++);
    w.info.state = WorkerState::kUp;
    w.info.since_us = now;
    w.ready_us = now;
    workers_.push_back(std::move(w));
  }
}

std::vector<std::string> SimulatedWorkerPool::start_workers(int n) {
  if (n < 0) throw std::invalid_argument("start_workers: n < 0");
  poll();
  const std::int64_t now = clock_.now_us();
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    Worker w;
    w.info.id = "sim-" + std::to_string(next_id_++);
    w.info.state = WorkerState::kStarting;
    w.info.since_us = now;
    w.ready_us = now + delay_.next_us();
    ids.push_back(w.info.id);
    workers_.push_back(std::move(w));
    if (handler_) handler_(workers_.back().info);
  }
  poll();  // a zero delay is up at once
  return ids;
}

SimulatedWorkerPool::Worker& SimulatedWorkerPool::find(const std::string& id) {
  for (auto& w : workers_)
    if (w.info.id == id) return w;
  throw std::invalid_argument("worker pool: no worker '" + id + "'");
}

void SimulatedWorkerPool::set_state(Worker& w, WorkerState s, std::int64_t at_us) {
  w.info.state = s;
  w.info.since_us = at_us;
  if (handler_) handler_(w.info);
}

void SimulatedWorkerPool::stop_worker(const std::string& id) {
  poll();
  Worker& w = find(id);
  const std::int64_t now = clock_.now_us();
  if (w.info.state == WorkerState::kStarting) {  // never served: nothing to drain
    set_state(w, WorkerState::kStopped, now);
    return;
  }
  if (w.info.state != WorkerState::kUp) return;
  set_state(w, WorkerState::kDraining, now);
  if (!drain_hook_) return on_drained(id);
  drain_hook_(id, [this, id] { on_drained(id); });
}

void SimulatedWorkerPool::on_drained(const std::string& id) {
  Worker& w = find(id);
  if (w.info.state == WorkerState::kDraining) set_state(w, WorkerState::kStopped, clock_.now_us());
}

void SimulatedWorkerPool::fail_worker(const std::string& id, const std::string& reason) {
  Worker& w = find(id);
  if (w.info.state == WorkerState::kStopped || w.info.state == WorkerState::kFailed) return;
  w.info.failure = reason;
  set_state(w, WorkerState::kFailed, clock_.now_us());
}

void SimulatedWorkerPool::poll() {
  const std::int64_t now = clock_.now_us();
  for (;;) {  // earliest first, then start order, so the handler sees time move forward
    Worker* next = nullptr;
    for (auto& w : workers_)
      if (w.info.state == WorkerState::kStarting && w.ready_us <= now && (!next || w.ready_us < next->ready_us))
        next = &w;
    if (!next) return;
    set_state(*next, WorkerState::kUp, next->ready_us);
  }
}

std::int64_t SimulatedWorkerPool::next_change_us() const {
  std::int64_t next = -1;
  for (const auto& w : workers_)
    if (w.info.state == WorkerState::kStarting && (next < 0 || w.ready_us < next)) next = w.ready_us;
  return next;
}

std::vector<WorkerInfo> SimulatedWorkerPool::list_workers() {
  poll();
  std::vector<WorkerInfo> out;
  for (const auto& w : workers_) out.push_back(w.info);
  return out;
}

}  // namespace lull::manager
