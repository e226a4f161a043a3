#include "runtime/serve/serve_session.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "runtime/serve/model_check.h"

namespace lull::serve {

namespace {
Answer error_answer(int status, std::string why) {
  Answer a;
  a.http_status = status;
  a.body = std::move(why);
  return a;
}
}  // namespace

ServeSession::ServeSession(const runtime::PolicyTable& table, std::vector<WorkerEndpoint> workers,
                           ServeOptions options)
    : table_(table),
      options_(options),
      workers_(std::move(workers)),
      relay_(*this),
      dispatcher_(table, clock_, relay_) {
  if (static_cast<int>(workers_.size()) != table_.workers)
    throw std::invalid_argument("the policy set was compiled for " + std::to_string(table_.workers) +
                                " workers but " + std::to_string(workers_.size()) + " worker URLs were given");
  std::vector<std::string> names;
  for (const auto& m : table_.models) names.push_back(m.name);
  backend_ = std::make_unique<TorchServeBackend>(workers_, names, book_, options_.backend);
  backend_->set_completion_handler([this](const runtime::BatchResult& r) { on_backend_done(r); });
  backend_->set_health_handler([this](int worker, bool up) { on_health(worker, up); });
  dispatcher_.on_batch_done([this](const runtime::BatchResult& r, std::int64_t) { on_dispatcher_done(r); });
  counters_.per_model.assign(table_.models.size(), 0);
}

ServeSession::~ServeSession() {
  shutdown();
  backend_.reset();  // stops its threads before the dispatcher they call into goes away
}

void ServeSession::start() {
  if (options_.check_models) {
    std::vector<std::string> names;
    for (const auto& m : table_.models) names.push_back(m.name);
    HttpClient client;
    check_models_loaded(client, workers_, names);
  }
  if (backend_->start() == 0) throw std::runtime_error("no worker answers GET /ping");
  // Workers down at start leave rotation now; later changes come through on_health.
  std::lock_guard<std::mutex> lock(mu_);
  for (int w = 0; w < static_cast<int>(workers_.size()); ++w)
    dispatcher_.set_worker_available(w, backend_->worker_up(w));
}

void ServeSession::on_health(int worker, bool up) {
  std::unique_lock<std::mutex> lock(mu_);
  // Going down hands the worker's queue to the others, which may start batches.
  dispatcher_.set_worker_available(worker, up);
  send_outbox(lock);
}

void ServeSession::send_outbox(std::unique_lock<std::mutex>& lock) {
  if (outbox_.empty()) return;
  std::vector<runtime::BatchRequest> batches;
  batches.swap(outbox_);
  lock.unlock();
  // The backend is thread-safe and reports every batch from its client
  // thread, never from inside start_batch, so sending unlocked is safe.
  for (const auto& b : batches) backend_->start_batch(b);
}

void ServeSession::shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  std::vector<runtime::QueryId> ids;
  for (const auto& [id, m] : meta_) ids.push_back(id);
  for (auto id : ids) answer_error(id, "server shutting down");
}

Answer ServeSession::serve(std::string input) {
  auto [id, future] = book_.add(std::move(input));
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (shut_down_) {
      book_.abandon(id);
      return error_answer(503, "server shutting down");
    }
    counters_.queries++;
    meta_[id].arrival_us = clock_.now_us();
    dispatcher_.on_arrival(id);
    send_outbox(lock);
  }
  if (future.wait_for(std::chrono::milliseconds(options_.answer_timeout_ms)) != std::future_status::ready) {
    std::lock_guard<std::mutex> lock(mu_);
    if (meta_.erase(id)) {  // still unanswered: give up on it
      book_.abandon(id);
      counters_.failed++;
      return error_answer(504, "no answer within " + std::to_string(options_.answer_timeout_ms) + " ms");
    }
  }
  QueryOutcome o = future.get();
  Answer a;
  a.http_status = o.ok ? 200 : 503;
  a.body = o.ok ? std::move(o.prediction_json) : std::move(o.error);
  a.model = o.model;
  a.worker = o.worker;
  a.retried = o.retried;
  return a;
}

void ServeSession::on_backend_done(const runtime::BatchResult& r) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!r.queries.empty() && retry_batches_.erase(r.queries.front())) {
    // A retry batch: the Dispatcher never saw it, so it is settled here.
    for (auto id : r.queries) {
      if (r.ok) answer_ok(id, r.model, r.worker);
      else answer_error(id, "failed on two workers (last: " + backend_->stats(r.worker).last_error + ")");
    }
    return;
  }
  relay_.deliver(r);  // the Dispatcher frees the worker, then calls on_dispatcher_done
  send_outbox(lock);  // the worker's next batch, and any retry
}

void ServeSession::on_dispatcher_done(const runtime::BatchResult& r) {
  if (r.ok) {
    for (auto id : r.queries) answer_ok(id, r.model, r.worker);
  } else {
    retry_or_fail(r, backend_->stats(r.worker).last_error);
  }
}

int ServeSession::next_up_worker(int after) const {
  const int k = static_cast<int>(workers_.size());
  for (int i = 1; i <= k; ++i) {
    const int w = (after + i) % k;
    if (w != after && backend_->worker_up(w)) return w;
  }
  return -1;
}

void ServeSession::retry_or_fail(const runtime::BatchResult& failed, const std::string& why) {
  runtime::BatchRequest retry;
  retry.worker = next_up_worker(failed.worker);
  std::int64_t earliest_deadline_us = INT64_MAX;
  for (auto id : failed.queries) {
    auto it = meta_.find(id);
    if (it == meta_.end()) continue;  // answered already (timed out or shut down)
    if (it->second.retried || retry.worker < 0) {
      answer_error(id, (retry.worker < 0 ? "no other worker is up; " : "") + why);
      continue;
    }
    it->second.retried = true;
    counters_.retried++;
    retry.queries.push_back(id);
    earliest_deadline_us = std::min(earliest_deadline_us, it->second.arrival_us + table_.slo_us);
  }
  if (retry.queries.empty()) return;
  // Same model if it still meets the earliest deadline, else the fastest.
  const auto& lat = table_.models[failed.model].latency_us;
  const size_t b = retry.queries.size();
  const double needed_us = b <= lat.size() ? lat[b - 1] : lat.back();
  retry.model = clock_.now_us() + static_cast<std::int64_t>(needed_us) <= earliest_deadline_us ? failed.model : 0;
  retry_batches_.insert(retry.queries.front());
  outbox_.push_back(std::move(retry));
}

void ServeSession::answer_ok(runtime::QueryId id, int model, int worker) {
  auto it = meta_.find(id);
  if (it == meta_.end()) return;
  const std::int64_t latency_us = clock_.now_us() - it->second.arrival_us;
  QueryOutcome o;
  o.ok = true;
  o.prediction_json = book_.output(id);
  o.model = table_.models[model].name;
  o.worker = worker;
  o.retried = it->second.retried;
  meta_.erase(it);
  counters_.answered++;
  counters_.per_model[model]++;
  if (latency_us > table_.slo_us) {
    counters_.violations++;
  } else {
    counters_.satisfied++;
    counters_.satisfied_accuracy_sum += table_.models[model].accuracy;
  }
  book_.complete(id, std::move(o));
}

void ServeSession::answer_error(runtime::QueryId id, const std::string& why) {
  auto it = meta_.find(id);
  if (it == meta_.end()) return;
  QueryOutcome o;
  o.ok = false;
  o.error = why;
  o.retried = it->second.retried;
  meta_.erase(it);
  counters_.failed++;
  book_.complete(id, std::move(o));
}

std::string ServeSession::metrics_text() {
  ServeSnapshot s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.counters = counters_;
    s.load_estimate_qps = dispatcher_.last_estimate_qps();
    const auto& p = table_.policies[dispatcher_.current_grid_point()];
    s.policy_load_qps = p.load_qps;
    s.expected_accuracy = p.expected_accuracy;
    s.expected_violation_rate = p.expected_violation_rate;
    for (int w = 0; w < static_cast<int>(workers_.size()); ++w) {
      WorkerSnapshot ws;
      ws.queue_length = dispatcher_.queued(w);
      s.workers.push_back(ws);
    }
  }
  s.task = table_.task;
  s.slo_ms = table_.slo_us / 1000.0;
  for (const auto& m : table_.models) s.model_names.push_back(m.name);
  for (int w = 0; w < static_cast<int>(workers_.size()); ++w) {
    const WorkerStats st = backend_->stats(w);
    s.workers[w].url = workers_[w].inference_url;
    s.workers[w].up = st.up;
    s.workers[w].batches_in_flight = st.batches_in_flight;
    s.workers[w].batches_ok = st.batches_ok;
    s.workers[w].batches_failed = st.batches_failed;
  }
  return render_prometheus(s);
}

}  // namespace lull::serve
