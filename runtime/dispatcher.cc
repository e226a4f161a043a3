#include "runtime/dispatcher.h"

#include "runtime/model_selector.h"

namespace lull::runtime {
Dispatcher::Dispatcher(const PolicyTable& table, Clock& clock, Backend& backend, const SchedulerOptions& options)
    : Scheduler(table.loads_qps(), clock, backend, options),
      table_(table),
      central_(table.slo_us, table.workers),
      queues_(static_cast<std::size_t>(table.workers)),
      busy_(static_cast<std::size_t>(table.workers), 0),
      available_(static_cast<std::size_t>(table.workers), 1),
      num_available_(table.workers) {}

void Dispatcher::on_arrival(QueryId id) {
  const std::int64_t now = clock_.now_us();
  note_arrival(now);
  // With every worker available (always, under the simulator) this is plain
  // round-robin; the check costs one branch per arrival.
  const int w = num_available_ == static_cast<int>(queues_.size()) ? central_.next_worker()
                                                                   : central_.next_available_worker(available_);
  queues_[w].push(central_.stamp(id, now));
  if (!busy_[w]) try_dispatch(w);
}

void Dispatcher::set_worker_available(int worker, bool available) {
  char& a = available_.at(static_cast<std::size_t>(worker));
  if ((a != 0) == available) return;
  a = available ? 1 : 0;
  num_available_ += available ? 1 : -1;
  if (available || num_available_ == 0) return;  // with no one to take them, the queries stay
  WorkerQueue& q = queues_[worker];
  q.drain(moved_);
  for (const Query& query : moved_) queues_[central_.next_available_worker(available_)].push(query);
  for (int w = 0; w < static_cast<int>(queues_.size()); ++w)
    if (available_[w] && !busy_[w]) try_dispatch(w);
}

void Dispatcher::try_dispatch(int w) {
  WorkerQueue& q = queues_[w];
  if (q.empty()) return;
  const int grid_point = current_grid_point();
  const std::int64_t slack_us = q.front().deadline_us - clock_.now_us();
  const Selection s = select_action(table_.policies[grid_point], q.size(), slack_us);
  GridUsage& u = usage_[grid_point];
  ++u.decisions;
  u.queries += static_cast<std::uint64_t>(s.batch);
  u.fallbacks += s.fallback ? 1 : 0;
  request_.worker = w;
  request_.model = s.model;
  q.pop_front(s.batch, request_.queries);
  busy_[w] = 1;  // before start_batch: a synchronous backend may complete inside it
  backend_.start_batch(request_);
}

void Dispatcher::handle_done(const BatchResult& r) {
  busy_[r.worker] = 0;
  notify_done(r);
  try_dispatch(r.worker);
}

}  // namespace lull::runtime
