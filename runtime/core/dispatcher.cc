#include "runtime/core/dispatcher.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/core/model_selector.h"

namespace lull::core {
namespace {

int pool_size(const DispatcherPolicies& p) {
  if (p.library.empty()) throw std::invalid_argument("dispatcher needs at least one policy set");
  return p.pool_workers > 0 ? p.pool_workers : p.library.front().workers;
}

std::vector<char> available_at_start(const DispatcherPolicies& p) {
  const auto pool = static_cast<std::size_t>(pool_size(p));
  if (p.available_at_start.empty()) return std::vector<char>(pool, 1);
  if (p.available_at_start.size() != pool)
    throw std::invalid_argument("dispatcher: available_at_start needs one entry per pool worker");
  return p.available_at_start;
}

int up_at_start(const DispatcherPolicies& p) {
  const std::vector<char> a = available_at_start(p);
  return static_cast<int>(std::count_if(a.begin(), a.end(), [](char up) { return up != 0; }));
}

// The grid of the table the dispatcher starts on (load estimates and the
// "new policy needed" events are reported against it).
std::vector<double> start_grid(const DispatcherPolicies& p) {
  const int up = up_at_start(p);
  const PolicyTable* best = &p.library.front();
  for (const auto& t : p.library)
    if (t.workers <= up) best = &t;
  return best->loads_qps();
}

}  // namespace

Dispatcher::Dispatcher(const PolicyTable& table, Clock& clock, Backend& backend, const SchedulerOptions& options)
    : Dispatcher(DispatcherPolicies{{table}, table.workers, {}, nullptr}, clock, backend, options) {}

Dispatcher::Dispatcher(DispatcherPolicies p, Clock& clock, Backend& backend, const SchedulerOptions& options)
    : Dispatcher(std::move(p), clock, &backend, options) {}

Dispatcher::Dispatcher(DispatcherPolicies p, Clock& clock, const SchedulerOptions& options)
    : Dispatcher(std::move(p), clock, nullptr, options) {}

Dispatcher::Dispatcher(DispatcherPolicies p, Clock& clock, Backend* backend, const SchedulerOptions& options)
    : Scheduler(start_grid(p), clock, backend, options),
      catalog_(p.library),
      provider_(p.provider),
      pattern_(p.provider != nullptr),
      central_(p.library.at(0).slo_us, pool_size(p)),
      queues_(static_cast<std::size_t>(pool_size(p))),
      busy_(queues_.size(), 0),
      running_(queues_.size()),
      retries_(queues_.size()),
      available_(available_at_start(p)),
      num_available_(up_at_start(p)) {
  usage_.assign(static_cast<std::size_t>(catalog_.size()), GridUsage{});
  refresh_policy();
}

void Dispatcher::add_policies(const PolicyTable& table) { apply_mail(PolicyMail{table, false}); }

void Dispatcher::replace_policies(const PolicyTable& table) { apply_mail(PolicyMail{table, true}); }

void Dispatcher::apply_mail(const PolicyMail& mail) {
  catalog_.apply(mail);
  if (usage_.size() < static_cast<std::size_t>(catalog_.size()))
    usage_.resize(static_cast<std::size_t>(catalog_.size()));
  refresh_policy();
}

void Dispatcher::refresh_policy() {
  if (inbox_.has_mail())
    for (const PolicyMail& m : inbox_.take()) {
      try {
        apply_mail(m);
      } catch (const std::invalid_argument& e) {  // never fails an arrival: the mail is dropped
        ++mail_rejected_;
        last_mail_error_ = e.what();
      }
    }
  bool went_beyond = false;
  if (burstiness().bins_closed() != estimated_at_bins_) {  // the estimate can have moved
    estimated_at_bins_ = burstiness().bins_closed();
    estimate_ = burstiness().estimate();
    const int beyond_before = pattern_.beyond_events();
    pattern_.update(estimate_, catalog_.patterns());
    went_beyond = pattern_.beyond_events() != beyond_before;
  }
  const double load = last_estimate_qps();
  choice_ = catalog_.choose(num_available_, load, provider_ != nullptr, pattern_.current());
  if (!provider_) {
    if (went_beyond && on_beyond_) on_beyond_(estimate_, choice_.arrivals);
    return;
  }
  const PolicyRequest want = catalog_.wanted(num_available_, load, pattern_.current());
  if (want.workers == 0) return;
  if (want.workers == last_request_.workers && want.load_qps == last_request_.load_qps &&
      want.arrivals == last_request_.arrivals)
    return;
  last_request_ = want;
  ++requests_;
  provider_->request(want);
}

void Dispatcher::on_arrival(QueryId id) { on_arrival_at(id, clock_.now_us()); }

void Dispatcher::start(const BatchRequest& batch) {
  if (backend_)
    backend_->start_batch(batch);
  else
    started_.push_back(batch);
}

std::vector<BatchRequest> Dispatcher::take_started() {
  std::vector<BatchRequest> out;
  out.swap(started_);
  return out;
}

std::vector<BatchRequest> Dispatcher::on_arrival_at(QueryId id, std::int64_t arrival_us) {
  // The load estimate sees arrivals in the order they reach the Dispatcher.
  note_arrival(clock_.now_us());
  refresh_policy();
  // With every worker available (always, under the simulator) this is plain
  // round-robin; the check costs one branch per arrival.
  const int w = num_available_ == static_cast<int>(queues_.size()) ? central_.next_worker()
                                                                   : central_.next_available_worker(available_);
  queues_[w].push(central_.stamp(id, arrival_us));
  if (!busy_[w]) try_dispatch(w);
  return take_started();
}

std::int64_t Dispatcher::expected_end_us(int model, std::size_t batch) const {
  const auto& lat = catalog_.header().models[model].latency_us;
  const double needed_us = batch <= lat.size() ? lat[batch - 1] : lat.back();
  return clock_.now_us() + static_cast<std::int64_t>(needed_us);
}

std::int64_t Dispatcher::busy_remaining_us(int worker) const {
  if (!busy(worker)) return 0;
  const std::int64_t left = running_[worker].expected_end_us - clock_.now_us();
  return left > 0 ? left : 0;
}

int Dispatcher::next_available_after(int worker) const {
  const int k = static_cast<int>(queues_.size());
  for (int i = 1; i < k; ++i) {
    const int w = (worker + i) % k;
    if (available_[w]) return w;
  }
  return -1;
}

void Dispatcher::dispatch_idle_available() {
  for (int w = 0; w < static_cast<int>(queues_.size()); ++w)
    if (available_[w] && !busy_[w]) try_dispatch(w);
}

std::vector<BatchRequest> Dispatcher::set_worker_available(int worker, bool available) {
  char& a = available_.at(static_cast<std::size_t>(worker));
  if ((a != 0) == available) return {};
  a = available ? 1 : 0;
  num_available_ += available ? 1 : -1;
  refresh_policy();
  if (available || num_available_ == 0) return {};  // with no one to take them, the queries stay
  WorkerQueue& q = queues_[worker];
  q.drain(moved_);
  for (const Query& query : moved_) queues_[central_.next_available_worker(available_)].push(query);
  auto& waiting = retries_[worker];
  while (!waiting.empty()) {
    retries_[next_available_after(worker)].push_back(std::move(waiting.front()));
    waiting.pop_front();
  }
  dispatch_idle_available();
  return take_started();
}

void Dispatcher::try_dispatch(int w) {
  if (!retries_[w].empty()) return start_retry(w);
  WorkerQueue& q = queues_[w];
  if (q.empty()) return;
  const std::int64_t slack_us = q.front().deadline_us - clock_.now_us();
  const Selection s = select_action(*choice_.policy, q.size(), slack_us);
  GridUsage& u = usage_[static_cast<std::size_t>(choice_.id)];
  ++u.decisions;
  u.queries += static_cast<std::uint64_t>(s.batch);
  u.fallbacks += s.fallback ? 1 : 0;
  request_.worker = w;
  request_.model = s.model;
  running_[w] = Running{q.front().deadline_us, false, 0};
  q.pop_front(s.batch, request_.queries);
  running_[w].expected_end_us = expected_end_us(s.model, request_.queries.size());
  busy_[w] = 1;  // before start_batch: a synchronous backend may complete inside it
  start(request_);
}

void Dispatcher::start_retry(int w) {
  Retry r = std::move(retries_[w].front());
  retries_[w].pop_front();
  // The failed batch's model if it can still finish by the earliest
  // deadline, else the fastest one.
  const std::size_t b = r.queries.size();
  const bool in_time = expected_end_us(r.model, b) <= r.earliest_deadline_us;
  request_.worker = w;
  request_.model = in_time ? r.model : 0;
  request_.queries = std::move(r.queries);
  running_[w] = Running{r.earliest_deadline_us, true, expected_end_us(request_.model, b)};
  busy_[w] = 1;
  start(request_);
}

std::vector<BatchRequest> Dispatcher::complete(const BatchResult& r) {
  busy_[r.worker] = 0;
  const Running ran = running_[r.worker];
  if (!r.ok && !ran.retry) {
    const int target = next_available_after(r.worker);
    if (target >= 0) {  // not done yet: the retry's result is the one observers see
      retries_[target].push_back(Retry{r.model, r.queries, ran.earliest_deadline_us});
      try_dispatch(r.worker);
      if (!busy_[target]) try_dispatch(target);
      return take_started();
    }
  }
  if (ran.retry) {
    retried_result_ = r;
    retried_result_.retried = true;
    notify_done(retried_result_);
  } else {
    notify_done(r);
  }
  try_dispatch(r.worker);
  return take_started();
}

}  // namespace lull::core
