#include "runtime/session/serve_session.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <chrono>
#include <stdexcept>

#include "runtime/core/admission.h"
#include "runtime/log/log.h"

namespace lull::session {

namespace {
frontend::Answer error_answer(int status, std::string why) {
  frontend::Answer a;
  a.http_status = status;
  a.body = std::move(why);
  return a;
}

// The slots in rotation at the start: none with a worker pool (add_worker
// admits each as its pool finds it up), else those up. The Dispatcher starts
// with exactly these, so its first choice and online request are for the
// workers up, not for the pool's vacant slots.
core::SchedulerOptions scheduler_options(const ServeOptions& options) {
  core::SchedulerOptions s;
  s.arrival_thinning = options.arrival_thinning;
  return s;
}

std::vector<char> available_at_start(const core::WorkerHealth& health, const ServeOptions& options) {
  std::vector<char> up(static_cast<std::size_t>(health.num_workers()), 0);
  if (!options.pool_managed)
    for (int w = 0; w < health.num_workers(); ++w) up[static_cast<std::size_t>(w)] = health.worker_up(w) ? 1 : 0;
  return up;
}
}  // namespace

ServeSession::ServeSession(const core::PolicyTable& table, core::Backend& backend, core::WorkerHealth& health,
                           core::Clock& clock, ServeOptions options)
    : table_(table),
      backend_(backend),
      clock_(clock),
      health_(health),
      options_(std::move(options)),
      dispatcher_(
          core::DispatcherPolicies{options_.library.empty() ? std::vector<core::PolicyTable>{table} : options_.library,
                                   health.num_workers(), available_at_start(health, options_), options_.online},
          clock, scheduler_options(options_)),
      worker_batches_(static_cast<std::size_t>(health.num_workers())),
      admitted_(static_cast<std::size_t>(health.num_workers()), options_.pool_managed ? 0 : 1) {
  current_policy_ = logged_policy_ = dispatcher_.current_choice().id;
  if (options_.online) options_.online->connect(dispatcher_.policy_inbox());
  // Once per process: an estimate hovering at the library's edge would repeat it.
  dispatcher_.on_pattern_beyond_library([this, logged = false](const core::BurstinessEstimate& e,
                                                               const ArrivalProcess& serving) mutable {
    if (logged) return;
    logged = true;
    log_line(log::Level::kWarn,
             "arrivals look like %s (gap CV^2 %.2f, count dispersion %.2f), burstier than every "
             "policy in the library; serving the %s policies (--online-compile on compiles one for the pattern; "
             "logged once, /metrics has the estimate)",
             arrival_estimate_text(e.process).c_str(), e.gap_cv2, e.dispersion, arrival_process_text(serving).c_str());
  });
  if (options_.library.empty() && !options_.online && health.num_workers() != table_.workers)
    throw std::invalid_argument("the policy set was compiled for " + std::to_string(table_.workers) + " workers but " +
                                std::to_string(health.num_workers()) + " workers were given");
  if (options_.worker_names.empty())
    for (int w = 0; w < workers(); ++w) options_.worker_names.push_back(options_.pool_managed ? "" : std::to_string(w));
  counters_.per_model.assign(table_.models.size(), 0);
  counters_.per_model_violations.assign(table_.models.size(), 0);
  counters_.per_model_satisfied.assign(table_.models.size(), 0);
  counters_.latency = LatencyHistogram::around_slo(table_.slo_us);
  if (options_.detect_drift) {
    DriftRule rule = options_.drift_rule;
    if (table_.percentile > 0 && table_.percentile <= 100) {
      rule.plan_percentile = table_.percentile;
      rule.percentile = std::min(rule.percentile, table_.percentile);
    }
    drift_ = std::make_unique<LatencyDriftDetector>(table_.models, rule);
  }
  backend_.set_completion_handler([this](const core::BatchResult& r) { on_backend_done(r); });
  dispatcher_.on_batch_done([this](const core::BatchResult& r, std::int64_t) { on_final_result(r); });
  std::lock_guard<std::mutex> lock(mu_);
  health.set_health_handler([this](int worker, bool up) { on_health(worker, up); });
  been_in_rotation_.assign(static_cast<std::size_t>(workers()), 0);
  for (int w = 0; w < workers(); ++w) {  // no query yet: nothing to start
    const bool up = admitted_[w] && health.worker_up(w);
    been_in_rotation_[static_cast<std::size_t>(w)] = up ? 1 : 0;
    (void)dispatcher_.set_worker_available(w, up);
  }
  core::ControlLoop* loop = options_.loop;
  if (!loop) {
    own_loop_ = std::make_unique<core::ControlLoop>(clock_);
    loop = own_loop_.get();
  }
  loop->add(reaper_);
  if (own_loop_) own_loop_->start();
}

ServeSession::~ServeSession() {
  if (options_.online) options_.online->disconnect();
  shutdown();
  if (own_loop_) own_loop_->stop();
}

std::int64_t ServeSession::next_give_up_us() {
  std::lock_guard<std::mutex> lock(mu_);
  // The front's, answered or not (then its tick drops it): the earliest.
  return by_arrival_.empty() ? core::Controller::kNever : by_arrival_.front().second;
}

void ServeSession::reap_late_queries(std::int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  while (!by_arrival_.empty()) {
    const auto [id, give_up_us] = by_arrival_.front();
    if (!pending_.count(id)) {  // answered
      by_arrival_.pop_front();
      continue;
    }
    if (now_us < give_up_us) return;
    by_arrival_.pop_front();
    counters_.failed++;  // still unanswered: give up on it
    answer(id, error_answer(504, "no answer within " + std::to_string(options_.answer_timeout_ms) + " ms"));
  }
}

void ServeSession::on_health(int worker, bool up) {
  // The health source's own lock, not under the session's.
  const std::string why = up ? "" : health_.down_reason(worker);
  std::unique_lock<std::mutex> lock(mu_);
  up = up && admitted_.at(static_cast<std::size_t>(worker));  // a pool's worker joins only through add_worker
  if (dispatcher_.worker_available(worker) != up) {
    // "back" only for a worker that was in rotation before (not its first start).
    char& was_in = been_in_rotation_.at(static_cast<std::size_t>(worker));
    log_line(up ? log::Level::kInfo : log::Level::kWarn, "worker %d (%s) %s%s%s", worker,
             options_.worker_names.at(static_cast<std::size_t>(worker)).c_str(),
             up ? (was_in ? "up: back in rotation" : "up: in rotation") : "down: out of rotation",
             why.empty() ? "" : ": ", why.c_str());
    if (up) was_in = 1;
  }
  // Going down hands the worker's queue to the others, which may start batches.
  send(lock, dispatcher_.set_worker_available(worker, up));
}

void ServeSession::add_worker(int slot, const std::string& name) {
  std::unique_lock<std::mutex> lock(mu_);
  admitted_.at(static_cast<std::size_t>(slot)) = 1;
  options_.worker_names.at(static_cast<std::size_t>(slot)) = name;
  worker_batches_[static_cast<std::size_t>(slot)] = WorkerBatches{};
  const bool up = health_.worker_up(slot);
  been_in_rotation_.at(static_cast<std::size_t>(slot)) = up ? 1 : 0;  // a new worker in the slot
  log_line(log::Level::kInfo, "worker %d (%s) added: %s", slot, name.c_str(),
           up ? "in rotation" : "joins the rotation at its next passing ping");
  send(lock, dispatcher_.set_worker_available(slot, up));
}

void ServeSession::drain_worker(int slot, std::function<void()> drained) {
  std::unique_lock<std::mutex> lock(mu_);
  admitted_.at(static_cast<std::size_t>(slot)) = 0;
  const bool busy = dispatcher_.busy(slot);
  log_line(log::Level::kInfo, "worker %d (%s) draining: out of rotation, %d queued queries move to the others%s", slot,
           options_.worker_names.at(static_cast<std::size_t>(slot)).c_str(), dispatcher_.queued(slot),
           busy ? ", its batch in flight finishes" : "");
  // Its queue and waiting retries go to the workers still available.
  std::vector<core::BatchRequest> batches;
  if (dispatcher_.worker_available(slot)) batches = dispatcher_.set_worker_available(slot, false);
  drains_.begin(slot, busy, std::move(drained));
  send(lock, std::move(batches));
}

void ServeSession::remove_worker(int slot) {
  std::unique_lock<std::mutex> lock(mu_);
  admitted_.at(static_cast<std::size_t>(slot)) = 0;
  std::vector<core::BatchRequest> batches;
  if (dispatcher_.worker_available(slot)) batches = dispatcher_.set_worker_available(slot, false);
  log_line(log::Level::kInfo, "worker %d (%s) removed", slot,
           options_.worker_names.at(static_cast<std::size_t>(slot)).c_str());
  options_.worker_names.at(static_cast<std::size_t>(slot)).clear();
  send(lock, std::move(batches));
}

void ServeSession::send(std::unique_lock<std::mutex>& lock, std::vector<core::BatchRequest> batches) {
  if (batches.empty()) return;
  const std::int64_t now_us = clock_.now_us();
  for (auto& b : batches) {
    if (b.queries.empty()) continue;
    sent_[b.queries.front()] = SentBatch{b.model, now_us};
    b.inputs.clear();
    for (const core::QueryId id : b.queries) {
      const auto it = pending_.find(id);
      b.inputs.push_back(it == pending_.end() ? nullptr : it->second.input);  // answered meanwhile: sent empty
    }
  }
  lock.unlock();
  // The backend reports batches from its own thread (TorchServe) or when
  // its caller says so (fakes), never from inside start_batch, so sending
  // unlocked is safe and keeps encoding and HTTP wake-ups off the lock.
  for (const auto& b : batches) backend_.start_batch(b);
}

void ServeSession::shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  std::vector<core::QueryId> ids;
  for (const auto& [id, q] : pending_) ids.push_back(id);
  for (auto id : ids) {
    counters_.failed++;
    answer(id, error_answer(503, "server shutting down"));
  }
}

int ServeSession::refuse_seconds(std::int64_t arrival_us) const {
  const int w = dispatcher_.peek_next_worker();
  const core::AdmissionInput in{clock_.now_us(), arrival_us + table_.slo_us, dispatcher_.busy_remaining_us(w),
                                dispatcher_.queued(w)};
  // The catalog's latencies: the profile's, or those observed once a
  // recompiled set was swapped in.
  const core::AdmissionVerdict v = core::admit_query(in, dispatcher_.catalog().header().models.front().latency_us);
  return v.admit ? 0 : core::retry_after_seconds(in, v);
}

void ServeSession::serve_async(std::string input, std::int64_t waited_us, std::function<void(frontend::Answer)> done) {
  // Before the lock: time in the front end and waiting for the lock is queue time.
  const std::int64_t arrival_us = clock_.now_us() - std::max<std::int64_t>(waited_us, 0);
  std::unique_lock<std::mutex> lock(mu_);
  const auto answer_now = [&](frontend::Answer a) {
    lock.unlock();
    done(std::move(a));
  };
  if (shut_down_) return answer_now(error_answer(503, "server shutting down"));
  counters_.queries++;
  if (options_.on_arrival) options_.on_arrival(arrival_us);
  if (options_.reject_late) {
    if (const int retry_s = refuse_seconds(arrival_us)) {
      counters_.rejected++;
      frontend::Answer a = error_answer(503, "overloaded: even the fastest model (" + table_.models.front().name +
                                                 ") cannot answer within the SLO at the current queue; retry later");
      a.retry_after_s = retry_s;
      return answer_now(std::move(a));
    }
  }
  const core::QueryId id = ++next_id_;
  PendingQuery& q = pending_[id];
  q.input = std::make_shared<const std::string>(std::move(input));
  q.arrival_us = arrival_us;
  q.done = std::move(done);
  const bool was_empty = by_arrival_.empty();
  by_arrival_.emplace_back(id, arrival_us + options_.answer_timeout_ms * 1000);
  if (was_empty) reaper_.wake();
  std::vector<core::BatchRequest> batches = dispatcher_.on_arrival_at(id, arrival_us);
  log_replacement();
  log_policy_switch();
  send(lock, std::move(batches));
}

std::future<frontend::Answer> ServeSession::submit(std::string input) {
  auto promise = std::make_shared<std::promise<frontend::Answer>>();
  auto future = promise->get_future();
  serve_async(std::move(input), 0, [promise](frontend::Answer a) { promise->set_value(std::move(a)); });
  return future;
}

void ServeSession::log_replacement() {
  if (dispatcher_.mail_rejected() != logged_rejected_) {
    logged_rejected_ = dispatcher_.mail_rejected();
    log_line(log::Level::kError, "policies not swapped in: %s", dispatcher_.last_mail_error().c_str());
  }
  const int generation = dispatcher_.catalog().generation();
  if (generation == logged_generation_) return;
  logged_generation_ = generation;
  const core::PolicyChoice& choice = dispatcher_.current_choice();
  current_policy_ = logged_policy_ = choice.id;  // this line says which policy serves: no switch line too
  log_line(log::Level::kInfo,
           "swapped in the policies recompiled from observed latencies (replacement %d): now the %g qps "
           "policy for %d workers, expected violation %.4f, accuracy %.4f",
           generation, choice.policy->load_qps, choice.workers, choice.policy->expected_violation_rate,
           choice.policy->expected_accuracy);
}

void ServeSession::log_policy_switch() {
  const core::PolicyChoice& choice = dispatcher_.current_choice();
  if (choice.id != current_policy_) {
    current_policy_ = choice.id;
    ++switches_since_log_;
    log_line(log::Level::kDebug, "policy: the %g qps policy for %d workers (load estimate %.1f qps)",
             choice.policy->load_qps, choice.workers, dispatcher_.last_estimate_qps());
  }
  // Near a grid boundary the estimate flips between neighbours many times a
  // second; one line per second at most says where it settled and how often.
  const std::int64_t now_us = clock_.now_us();
  if (switches_since_log_ == 0 || choice.id == logged_policy_ || now_us - last_log_us_ < 1'000'000) return;
  log_line(
      log::Level::kInfo,
      "policy switch to the %g qps policy for %d workers, arrivals %s (load estimate %.1f qps; %d switches since the "
      "last line)",
      choice.policy->load_qps, choice.workers, arrival_process_text(choice.arrivals).c_str(),
      dispatcher_.last_estimate_qps(), switches_since_log_);
  logged_policy_ = choice.id;
  last_log_us_ = now_us;
  switches_since_log_ = 0;
}

frontend::Answer ServeSession::serve(std::string input) { return submit(std::move(input)).get(); }

void ServeSession::on_backend_done(const core::BatchResult& r) {
  std::unique_lock<std::mutex> lock(mu_);
  WorkerBatches& wb = worker_batches_.at(static_cast<std::size_t>(r.worker));
  (r.ok ? wb.ok : wb.failed)++;
  log_line(log::Level::kDebug, "batch done: worker %d, %s, %zu queries, %s", r.worker,
           table_.models[r.model].name.c_str(), r.queries.size(), r.ok ? "ok" : "failed");
  DriftEvent event;
  bool drifted = false;
  if (const auto sent = r.queries.empty() ? sent_.end() : sent_.find(r.queries.front()); sent != sent_.end()) {
    const std::int64_t sent_us = sent->second.sent_us;
    sent_.erase(sent);
    drifted = check_drift(r, sent_us, &event);
  }
  // The Dispatcher frees the worker, retries or calls on_final_result.
  std::vector<core::BatchRequest> next = dispatcher_.complete(r);
  batch_done_.notify_all();
  if (drains_.draining(r.worker) && !dispatcher_.busy(r.worker)) drains_.on_idle(r.worker);
  send(lock, std::move(next));  // the worker's next batch, and any retry
  if (lock.owns_lock()) lock.unlock();
  if (drifted && options_.on_drift) options_.on_drift(event);
}

void ServeSession::swap_policies_and_wait(const std::vector<core::PolicyTable>& tables, const std::vector<int>& dropped,
                                          std::int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  // From the next decision on, only the new set's models, at every worker count.
  for (const auto& table : tables) dispatcher_.replace_policies(table);
  logged_generation_ = dispatcher_.catalog().generation();  // the caller logs this swap, not log_replacement
  current_policy_ = logged_policy_ = dispatcher_.current_choice().id;
  const auto idle = [&] {
    for (int w = 0; w < workers(); ++w)
      if (dispatcher_.retries_waiting(w) > 0) return false;  // a retry may run on its failed batch's model
    for (const auto& [first, b] : sent_)
      if (std::find(dropped.begin(), dropped.end(), b.model) != dropped.end()) return false;
    return true;
  };
  if (!batch_done_.wait_for(lock, std::chrono::milliseconds(timeout_ms), idle))
    throw std::runtime_error("batches in flight on the models that go did not finish within " +
                             std::to_string(timeout_ms) + " ms");
}

bool ServeSession::check_drift(const core::BatchResult& r, std::int64_t sent_us, DriftEvent* event) {
  const std::int64_t took_us = clock_.now_us() - sent_us;
  if (!drift_ || !r.ok) return false;
  const int batch = static_cast<int>(r.queries.size());
  const auto change = drift_->observe(r.model, batch, static_cast<double>(took_us));
  if (change == LatencyDriftDetector::Change::kNone) return false;
  const DriftPair& p = drift_->pair(r.model, batch);
  const std::string& model = table_.models[r.model].name;
  const double pct = (p.observed_us / p.profiled_us - 1) * 100;
  if (change == LatencyDriftDetector::Change::kEnded) {
    log_line(log::Level::kInfo,
             "latency drift over: %s batch %d: p%g of the last %d batches %.1f ms, profiled %.1f ms (%+.0f%%)",
             model.c_str(), batch, drift_->rule().percentile, p.samples, p.observed_us / 1000, p.profiled_us / 1000,
             pct);
    return false;
  }
  log_line(log::Level::kWarn,
           "latency drift: %s batch %d: p%g of the last %d batches %.1f ms, profiled %.1f ms (%+.0f%%); "
           "the policy's expectations do not hold here",
           model.c_str(), batch, drift_->rule().percentile, p.samples, p.observed_us / 1000, p.profiled_us / 1000, pct);
  event->pair = p;
  event->model = model;
  event->corrected_latency_us = drift_->corrected_latency_us();
  return true;
}

void ServeSession::on_final_result(const core::BatchResult& r) {
  const std::int64_t now_us = clock_.now_us();
  for (std::size_t i = 0; i < r.queries.size(); ++i) {
    const core::QueryId id = r.queries[i];
    auto it = pending_.find(id);
    if (it == pending_.end()) continue;  // answered already (timed out or shut down)
    counters_.retried += r.retried ? 1 : 0;
    if (!r.ok) {
      counters_.failed++;
      frontend::Answer a = error_answer(
          503, r.retried ? "failed on two workers (last: " + r.error + ")" : "no other worker is up; " + r.error);
      a.retried = r.retried;
      answer(id, std::move(a));
      continue;
    }
    if (i < r.input_status.size() && r.input_status[i] != 0) {
      // The model rejected this input: its own error, and no retry.
      counters_.failed++;
      frontend::Answer a = error_answer(r.input_status[i], i < r.outputs.size() ? r.outputs[i] : "");
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
    frontend::Answer a;
    if (i < r.outputs.size()) a.body = r.outputs[i];
    a.model = table_.models[r.model].name;
    a.worker = r.worker;
    a.retried = r.retried;
    answer(id, std::move(a));
  }
}

bool ServeSession::answer(core::QueryId id, frontend::Answer a) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return false;
  it->second.done(std::move(a));
  pending_.erase(it);
  return true;
}

ArrivalProcess ServeSession::served_pattern() {
  std::lock_guard<std::mutex> lock(mu_);
  return dispatcher_.pattern().current();
}

void ServeSession::log_line(log::Level level, const char* format, ...) const {
  if (!log::enabled(level)) return;  // a debug line on the hot path formats nothing
  va_list args;
  va_start(args, format);
  va_list size_args;
  va_copy(size_args, args);
  const int n = std::vsnprintf(nullptr, 0, format, size_args);
  va_end(size_args);
  std::string text(static_cast<std::size_t>(std::max(n, 0)), '\0');
  std::vsnprintf(text.data(), text.size() + 1, format, args);
  va_end(args);
  log::write(level, group_prefix() + text);
}

std::size_t ServeSession::pending() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

int ServeSession::workers_up() {
  std::lock_guard<std::mutex> lock(mu_);
  return dispatcher_.workers_available();
}

bool ServeSession::healthy() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return false;
  for (int w = 0; w < workers(); ++w)
    if (dispatcher_.worker_available(w)) return true;
  return false;
}

std::string ServeSession::metrics_text() {
  ServeSnapshot s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.counters = counters_;
    s.load_estimate_qps = dispatcher_.last_estimate_qps();
    const core::PolicyChoice& choice = dispatcher_.current_choice();
    const auto& p = *choice.policy;
    s.policy_load_qps = p.load_qps;
    s.policy_workers = choice.workers;
    s.policy_arrivals = arrival_process_text(choice.arrivals);
    s.arrivals = dispatcher_.burstiness_estimate();
    s.arrival_rate_cv2 = dispatcher_.burstiness().rate_cv2();
    s.pattern_switches = static_cast<std::uint64_t>(dispatcher_.pattern().switches());
    s.expected_accuracy = p.expected_accuracy;
    s.expected_violation_rate = p.expected_violation_rate;
    s.policy_replacements = static_cast<std::uint64_t>(dispatcher_.catalog().generation());
    if (drift_) {
      s.drift.enabled = true;
      s.drift.pairs = drift_->judged();
      s.drift.drifting = drift_->drifting();
      s.drift.starts = drift_->drift_starts();
    }
    for (int w = 0; w < workers(); ++w) {
      WorkerSnapshot ws;
      ws.slot = w;
      ws.url = options_.worker_names.at(static_cast<std::size_t>(w));
      if (ws.url.empty()) continue;  // a vacant slot of a worker pool
      ws.up = dispatcher_.worker_available(w);
      ws.queue_length = dispatcher_.queued(w);
      ws.batches_in_flight = dispatcher_.busy(w) ? 1 : 0;
      ws.batches_ok = worker_batches_[w].ok;
      ws.batches_failed = worker_batches_[w].failed;
      s.workers.push_back(ws);
    }
  }
  for (auto& ws : s.workers) {  // the health source's own lock, not under the session's
    const core::WorkerEjection e = health_.ejection(ws.slot);
    ws.ejections = e.total;
    ws.ejected = e.ejected;
  }
  if (options_.online) {
    const core::OnlineCompileStats o = options_.online->stats();
    s.online_compile = true;
    s.compilations = o.compilations;
    s.compile_failures = o.failures;
    s.compile_seconds_sum = o.seconds_sum;
    s.compile_last_seconds = o.last_seconds;
  }
  s.task = table_.task;
  s.slo_seconds = table_.slo_us / 1e6;
  for (const auto& m : table_.models) s.model_names.push_back(m.name);
  std::string text = render_prometheus(s);
  if (options_.extra_metrics) text += options_.extra_metrics();
  return text;
}

}  // namespace lull::session
