#include "runtime/serve/serve_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "runtime/admission.h"

namespace lull::serve {

namespace {
Answer error_answer(int status, std::string why) {
  Answer a;
  a.http_status = status;
  a.body = std::move(why);
  return a;
}
}  // namespace

ServeSession::ServeSession(const runtime::PolicyTable& table, runtime::Backend& backend, WorkerHealth& health,
                           QueryInputs& inputs, runtime::Clock& clock, ServeOptions options)
    : table_(table),
      backend_(backend),
      inputs_(inputs),
      clock_(clock),
      options_(std::move(options)),
      relay_(*this),
      dispatcher_(table, clock, relay_),
      worker_batches_(static_cast<std::size_t>(table.workers)) {
  current_grid_point_ = logged_grid_point_ = dispatcher_.current_grid_point();
  if (health.num_workers() != table_.workers)
    throw std::invalid_argument("the policy set was compiled for " + std::to_string(table_.workers) +
                                " workers but " + std::to_string(health.num_workers()) + " workers were given");
  if (options_.worker_names.empty())
    for (int w = 0; w < table_.workers; ++w) options_.worker_names.push_back(std::to_string(w));
  counters_.per_model.assign(table_.models.size(), 0);
  counters_.per_model_violations.assign(table_.models.size(), 0);
  counters_.per_model_satisfied.assign(table_.models.size(), 0);
  counters_.latency = LatencyHistogram::around_slo(table_.slo_us);
  backend_.set_completion_handler([this](const runtime::BatchResult& r) { on_backend_done(r); });
  dispatcher_.on_batch_done([this](const runtime::BatchResult& r, std::int64_t) { on_final_result(r); });
  std::lock_guard<std::mutex> lock(mu_);
  health.set_health_handler([this](int worker, bool up) { on_health(worker, up); });
  for (int w = 0; w < table_.workers; ++w) dispatcher_.set_worker_available(w, health.worker_up(w));
  reaper_ = std::thread([this] { reap_late_queries(); });
}

ServeSession::~ServeSession() {
  shutdown();
  {
    std::lock_guard<std::mutex> lock(mu_);
    reaper_stop_ = true;
  }
  reaper_wake_.notify_all();
  reaper_.join();
}

void ServeSession::reap_late_queries() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!reaper_stop_) {
    if (deadlines_.empty()) {
      reaper_wake_.wait(lock);
      continue;
    }
    const auto [due, id] = deadlines_.front();
    if (std::chrono::steady_clock::now() < due) {
      reaper_wake_.wait_until(lock, due);
      continue;
    }
    deadlines_.pop_front();
    if (waiting_.count(id)) {  // still unanswered: give up on it
      counters_.failed++;
      answer(id, error_answer(504, "no answer within " + std::to_string(options_.answer_timeout_ms) + " ms"));
    }
  }
}

void ServeSession::on_health(int worker, bool up) {
  std::unique_lock<std::mutex> lock(mu_);
  if (dispatcher_.worker_available(worker) != up)
    std::fprintf(stderr, "lull serve: worker %d (%s) %s\n", worker,
                 options_.worker_names.at(static_cast<std::size_t>(worker)).c_str(),
                 up ? "up: back in rotation" : "down: out of rotation");
  // Going down hands the worker's queue to the others, which may start batches.
  dispatcher_.set_worker_available(worker, up);
  send_outbox(lock);
}

void ServeSession::send_outbox(std::unique_lock<std::mutex>& lock) {
  if (outbox_.empty()) return;
  std::vector<runtime::BatchRequest> batches;
  batches.swap(outbox_);
  lock.unlock();
  // The backend reports batches from its own thread (TorchServe) or when
  // its caller says so (fakes), never from inside start_batch, so sending
  // unlocked is safe and keeps encoding and HTTP wake-ups off the lock.
  for (const auto& b : batches) backend_.start_batch(b);
}

void ServeSession::shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  std::vector<runtime::QueryId> ids;
  for (const auto& [id, w] : waiting_) ids.push_back(id);
  for (auto id : ids) {
    counters_.failed++;
    answer(id, error_answer(503, "server shutting down"));
  }
}

int ServeSession::refuse_seconds(std::int64_t arrival_us) const {
  const int w = dispatcher_.peek_next_worker();
  const runtime::AdmissionInput in{clock_.now_us(), arrival_us + table_.slo_us, dispatcher_.busy_remaining_us(w),
                                   dispatcher_.queued(w)};
  const runtime::AdmissionVerdict v = runtime::admit_query(in, table_.models.front().latency_us);
  return v.admit ? 0 : runtime::retry_after_seconds(in, v);
}

void ServeSession::serve_async(std::string input, std::int64_t waited_us, std::function<void(Answer)> done) {
  // Before the lock: time in the front end and waiting for the lock is queue time.
  const std::int64_t arrival_us = clock_.now_us() - std::max<std::int64_t>(waited_us, 0);
  std::unique_lock<std::mutex> lock(mu_);
  const auto answer_now = [&](Answer a) {
    lock.unlock();
    done(std::move(a));
  };
  if (shut_down_) return answer_now(error_answer(503, "server shutting down"));
  counters_.queries++;
  if (options_.reject_late) {
    if (const int retry_s = refuse_seconds(arrival_us)) {
      counters_.rejected++;
      Answer a = error_answer(503, "overloaded: even the fastest model (" + table_.models.front().name +
                                       ") cannot answer within the SLO at the current queue; retry later");
      a.retry_after_s = retry_s;
      return answer_now(std::move(a));
    }
  }
  const runtime::QueryId id = ++next_id_;
  inputs_.put(id, std::move(input));
  Waiting& w = waiting_[id];
  w.arrival_us = arrival_us;
  w.done = std::move(done);
  if (deadlines_.empty()) reaper_wake_.notify_one();
  deadlines_.emplace_back(std::chrono::steady_clock::now() - std::chrono::microseconds(waited_us) +
                              std::chrono::milliseconds(options_.answer_timeout_ms),
                          id);
  dispatcher_.on_arrival_at(id, arrival_us);
  log_policy_switch();
  send_outbox(lock);
}

std::future<Answer> ServeSession::submit(std::string input) {
  auto promise = std::make_shared<std::promise<Answer>>();
  auto future = promise->get_future();
  serve_async(std::move(input), 0, [promise](Answer a) { promise->set_value(std::move(a)); });
  return future;
}

void ServeSession::log_policy_switch() {
  const int grid_point = dispatcher_.current_grid_point();
  if (grid_point != current_grid_point_) {
    current_grid_point_ = grid_point;
    ++switches_since_log_;
  }
  // Near a grid boundary the estimate flips between neighbours many times a
  // second; one line per second at most says where it settled and how often.
  const std::int64_t now_us = clock_.now_us();
  if (switches_since_log_ == 0 || grid_point == logged_grid_point_ || now_us - last_log_us_ < 1'000'000) return;
  std::fprintf(stderr, "lull serve: policy switch to the %g qps policy (load estimate %.1f qps; %d switches since the last line)\n",
               table_.policies[grid_point].load_qps, dispatcher_.last_estimate_qps(), switches_since_log_);
  logged_grid_point_ = grid_point;
  last_log_us_ = now_us;
  switches_since_log_ = 0;
}

Answer ServeSession::serve(std::string input) { return submit(std::move(input)).get(); }

void ServeSession::on_backend_done(const runtime::BatchResult& r) {
  std::unique_lock<std::mutex> lock(mu_);
  WorkerBatches& wb = worker_batches_.at(static_cast<std::size_t>(r.worker));
  (r.ok ? wb.ok : wb.failed)++;
  relay_.deliver(r);  // the Dispatcher frees the worker, retries or calls on_final_result
  send_outbox(lock);  // the worker's next batch, and any retry
}

void ServeSession::on_final_result(const runtime::BatchResult& r) {
  const std::int64_t now_us = clock_.now_us();
  for (std::size_t i = 0; i < r.queries.size(); ++i) {
    const runtime::QueryId id = r.queries[i];
    auto it = waiting_.find(id);
    if (it == waiting_.end()) continue;  // answered already (timed out or shut down)
    counters_.retried += r.retried ? 1 : 0;
    if (!r.ok) {
      counters_.failed++;
      Answer a = error_answer(503, r.retried ? "failed on two workers (last: " + r.error + ")"
                                             : "no other worker is up; " + r.error);
      a.retried = r.retried;
      answer(id, std::move(a));
      continue;
    }
    if (i < r.input_status.size() && r.input_status[i] != 0) {
      // The model rejected this input: its own error, and no retry.
      counters_.failed++;
      Answer a = error_answer(r.input_status[i], i < r.outputs.size() ? r.outputs[i] : "");
      a.error_is_json = true;
      a.model = table_.models[r.model].name;
      a.worker = r.worker;
      answer(id, std::move(a));
      continue;
    }
    const std::int64_t latency_us = now_us - it->second.arrival_us;
    counters_.answered++;
    counters_.per_model[r.model]++;
    counters_.latency.observe_us(latency_us);
    if (latency_us > table_.slo_us) {
      counters_.violations++;
      counters_.per_model_violations[r.model]++;
    } else {
      counters_.satisfied++;
      counters_.per_model_satisfied[r.model]++;
      counters_.satisfied_accuracy_sum += table_.models[r.model].accuracy;
    }
    Answer a;
    if (i < r.outputs.size()) a.body = r.outputs[i];
    a.model = table_.models[r.model].name;
    a.worker = r.worker;
    a.retried = r.retried;
    answer(id, std::move(a));
  }
}

bool ServeSession::answer(runtime::QueryId id, Answer a) {
  auto it = waiting_.find(id);
  if (it == waiting_.end()) return false;
  it->second.done(std::move(a));
  waiting_.erase(it);
  inputs_.erase(id);
  return true;
}

bool ServeSession::healthy() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return false;
  for (int w = 0; w < table_.workers; ++w)
    if (dispatcher_.worker_available(w)) return true;
  return false;
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
    for (int w = 0; w < table_.workers; ++w) {
      WorkerSnapshot ws;
      ws.url = options_.worker_names.at(static_cast<std::size_t>(w));
      ws.up = dispatcher_.worker_available(w);
      ws.queue_length = dispatcher_.queued(w);
      ws.batches_in_flight = dispatcher_.busy(w) ? 1 : 0;
      ws.batches_ok = worker_batches_[w].ok;
      ws.batches_failed = worker_batches_[w].failed;
      s.workers.push_back(ws);
    }
  }
  s.task = table_.task;
  s.slo_seconds = table_.slo_us / 1e6;
  for (const auto& m : table_.models) s.model_names.push_back(m.name);
  return render_prometheus(s);
}

}  // namespace lull::serve
