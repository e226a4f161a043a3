// The autoscaler over a real worker pool under `lull serve` (why and how:
// see serving_autoscaler.h).
#include "runtime/pools/serving_autoscaler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "runtime/net/prometheus_text.h"

namespace lull::pools {

namespace {
// The pool's `drained` callbacks wait in the session, which outlives this
// object and the pool: after stop() they must not reach the pool.
struct DrainGate {
  std::mutex mu;
  bool open = true;
};

std::string seconds(std::int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(us) * 1e-6);
  return buf;
}
}  // namespace

ServingAutoscaler::ServingAutoscaler(const std::vector<core::PolicyTable>& library, ServingAutoscalerOptions options,
                                     manager::WorkerPool& pool, const core::Clock& clock)
    : options_(std::move(options)),
      pool_(pool),
      clock_(clock),
      t0_us_(clock.now_us()),
      capacity_(library, options_.target),
      scaler_(capacity_.table(), options_.autoscale, 0),
      slot_map_(2 * scaler_.ceiling_workers()) {
  if (options_.retry_base_us <= 0 || options_.retry_max_us < options_.retry_base_us)
    throw std::invalid_argument("autoscale: the retry backoff must be positive, its maximum at least its start");
  if (options_.initial_workers > scaler_.ceiling_workers())
    throw std::invalid_argument("autoscale: " + std::to_string(options_.initial_workers) +
                                " initial workers is above the largest worker count allowed (" +
                                std::to_string(scaler_.ceiling_workers()) + ")");
  last_tick_us_ = t0_us_;
}

ServingAutoscaler::~ServingAutoscaler() { stop(); }

void ServingAutoscaler::say(const std::string& line) {
  if (options_.log) options_.log(line);
}

void ServingAutoscaler::record_arrival(std::int64_t t_us) {
  std::lock_guard<std::mutex> lock(arrivals_mu_);
  arrivals_.push_back(t_us);
}

int ServingAutoscaler::slot_of(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(slots_mu_);
  return slot_map_.slot_of(worker_id);
}

std::vector<std::string> ServingAutoscaler::management_urls_up() {
  std::lock_guard<std::mutex> lock(slots_mu_);
  std::vector<std::string> out;
  for (const auto& [id, url] : management_of_) {
    const auto state = state_of_.find(id);
    if (state != state_of_.end() && state->second == manager::WorkerState::kUp) out.push_back(url);
  }
  return out;
}

void ServingAutoscaler::use_library(const std::vector<core::PolicyTable>& library) {
  std::lock_guard<std::mutex> s(stats_mu_);
  next_capacity_ = std::make_unique<manager::CapacityTable>(capacity_.use_library(library));
}

void ServingAutoscaler::follow_pattern(const ArrivalProcess& served) {
  {
    std::lock_guard<std::mutex> s(stats_mu_);
    auto table = capacity_.follow(served);
    if (!table) return;
    next_capacity_ = std::make_unique<manager::CapacityTable>(std::move(*table));
  }
  say("capacity now read for arrivals " + arrival_process_text(served));
}

void ServingAutoscaler::attach(core::WorkerSlots& slots) {
  if (slots.slot_count() != this->slots())
    throw std::invalid_argument("autoscale: the backend and session need " + std::to_string(this->slots()) +
                                " worker slots");
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    slots_ = &slots;
  }
  pool_.set_state_handler([this](const manager::WorkerInfo& w) { on_state(w); });
  auto gate = std::make_shared<DrainGate>();
  pool_.set_drain_hook([this, gate](const std::string& id, std::function<void()> drained) {
    on_drain(id, [gate, drained = std::move(drained)] {
      std::lock_guard<std::mutex> lock(gate->mu);
      if (gate->open) drained();
    });
  });
  // stop() closes the gate through this hook's replacement below.
  std::lock_guard<std::mutex> lock(slots_mu_);
  close_gate_ = [gate] {
    std::lock_guard<std::mutex> g(gate->mu);
    gate->open = false;
  };
}

void ServingAutoscaler::on_drain(const std::string& id, std::function<void()> drained) {
  std::lock_guard<std::mutex> lock(slots_mu_);
  const int slot = slot_map_.slot_of(id);
  if (detached_ || slot < 0) {
    drained();  // never in rotation: nothing in flight
    return;
  }
  say("autoscale: draining worker " + id + " (slot " + std::to_string(slot) + ")");
  slots_->drain(slot, std::move(drained));
}

void ServingAutoscaler::on_state(const manager::WorkerInfo& w) {
  std::lock_guard<std::mutex> lock(slots_mu_);
  if (detached_) return;
  const auto prev_it = state_of_.find(w.id);
  const manager::WorkerState prev = prev_it == state_of_.end() ? manager::WorkerState::kStarting : prev_it->second;
  state_of_[w.id] = w.state;
  const bool holds_slot = slot_map_.slot_of(w.id) >= 0;
  if (w.state == manager::WorkerState::kUp && holds_slot) return;  // in rotation already
  if (w.state == manager::WorkerState::kStarting && holds_slot) {
    // It served and is not ready now (a pod whose container died, before
    // Kubernetes restarts it): out of rotation, what it had in flight fails
    // over; it takes a slot again once up.
    release_slot(w.id, "worker " + w.id + " not ready: " + w.failure);
    state_of_[w.id] = manager::WorkerState::kUp;  // if it fails now, it failed while serving: no start backoff
    {
      std::lock_guard<std::mutex> s(stats_mu_);
      not_ready_++;
      last_failure_ = w.failure;
      last_failure_worker_ = w.id;
    }
    say("autoscale: worker " + w.id + " out of rotation: " + w.failure +
        "; it rejoins once up, serving with the others");
    return;
  }
  if (w.state == manager::WorkerState::kUp) {
    const int slot = slot_map_.take(w.id);
    if (slot < 0) {
      say("autoscale: worker " + w.id + " is up but every slot is taken; it serves nothing");
      return;
    }
    management_of_[w.id] = w.management_url;
    slots_->join(slot, w.inference_url, w.management_url);
    {
      std::lock_guard<std::mutex> s(stats_mu_);
      failures_in_row_ = 0;
      hold_until_us_ = -1;
    }
    say("autoscale: worker " + w.id + " up at " + w.inference_url + " (slot " + std::to_string(slot) + ")");
    return;
  }
  if (w.state != manager::WorkerState::kStopped && w.state != manager::WorkerState::kFailed) return;
  state_of_.erase(w.id);
  release_slot(w.id, w.state == manager::WorkerState::kFailed ? "worker " + w.id + " failed: " + w.failure
                                                              : "worker " + w.id + " stopped");
  if (w.state == manager::WorkerState::kStopped) {
    say("autoscale: worker " + w.id + " stopped" + (w.failure.empty() ? "" : " (" + w.failure + ")"));
    return;
  }
  const char* phase = prev == manager::WorkerState::kStarting ? "start"
                      : prev == manager::WorkerState::kUp     ? "up"
                                                              : "draining";
  std::string line = "autoscale: worker " + w.id + " failed (" + phase + "): " + w.failure;
  {
    std::lock_guard<std::mutex> s(stats_mu_);
    failures_by_phase_[phase]++;
    last_failure_ = w.failure;
    last_failure_worker_ = w.id;
    if (prev == manager::WorkerState::kStarting) {
      ++failures_in_row_;
      std::int64_t backoff = options_.retry_base_us;
      for (int i = 1; i < failures_in_row_ && backoff < options_.retry_max_us; ++i) backoff *= 2;
      backoff = std::min(backoff, options_.retry_max_us);
      hold_until_us_ = last_tick_us_ + backoff;  // from the decision that asked for it
      line += "; scaling on hold for " + seconds(backoff) + " (" + std::to_string(failures_in_row_) +
              " failed starts in a row), serving with the workers up";
    }
  }
  say(line);
}

void ServingAutoscaler::release_slot(const std::string& id, const std::string& why) {
  const int slot = slot_map_.release(id);
  if (slot < 0) return;
  slots_->leave(slot, why);  // what it still had in flight (a worker that died) fails over now
  management_of_.erase(id);  // the variant switcher asks only workers holding a slot
}

int ServingAutoscaler::start_initial(std::int64_t timeout_us) {
  const int n = options_.initial_workers > 0 ? options_.initial_workers : scaler_.floor_workers();
  {
    std::lock_guard<std::mutex> s(stats_mu_);
    desired_ = n;
  }
  pool_.start_workers(n);
  say("autoscale: starting " + std::to_string(n) + " initial workers");
  const std::int64_t deadline = clock_.now_us() + timeout_us;
  for (;;) {
    // Counted over the whole pool, not by the ids start_workers() returned:
    // a Kubernetes pool's placeholders give way to pods with other names.
    const manager::PoolCounts counts = manager::pool_counts(pool_.list_workers());
    if (counts.starting == 0 || clock_.now_us() >= deadline) {
      next_tick_us_ = clock_.now_us() + scaler_.options().tick_us;
      return counts.up;
    }
    if (options_.refresh) options_.refresh();
    std::unique_lock<std::mutex> lock(run_mu_);
    if (run_cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return stop_; })) return counts.up;
  }
}

std::set<std::string> ServingAutoscaler::out_of_rotation() {
  std::lock_guard<std::mutex> lock(slots_mu_);
  std::set<std::string> out;
  if (slots_ && !detached_)
    for (const auto& [id, slot] : slot_map_.holders())
      if (!slots_->healthy(slot)) out.insert(id);
  return out;
}

void ServingAutoscaler::tick(std::int64_t now_us) {
  decide(now_us);
  const std::int64_t next = next_tick_us_.load() + scaler_.options().tick_us;
  next_tick_us_ = std::max(next, clock_.now_us());  // after a slow tick, no burst of catch-up ticks
}

manager::ScaleDecision ServingAutoscaler::decide(std::int64_t now_us) {
  std::vector<std::int64_t> arrivals;
  {
    std::lock_guard<std::mutex> lock(arrivals_mu_);
    arrivals.swap(arrivals_);
  }
  // Stamped before the session's lock: nearly, not exactly, in order.
  std::sort(arrivals.begin(), arrivals.end());
  for (const std::int64_t t : arrivals) scaler_.record_arrival(std::max<std::int64_t>(std::min(t, now_us) - t0_us_, 0));
  if (options_.refresh) options_.refresh();
  if (options_.pattern) follow_pattern(options_.pattern());
  {
    std::lock_guard<std::mutex> s(stats_mu_);
    last_tick_us_ = now_us;
    if (next_capacity_) {  // a variant switch: that library's capacities
      scaler_.set_capacity(std::move(*next_capacity_));
      next_capacity_.reset();
    }
    if (hold_until_us_ >= 0 && now_us < hold_until_us_) {
      manager::ScaleDecision held;
      held.t_us = now_us;
      return held;
    }
  }
  const manager::ScaleDecision d = scaler_.step(now_us - t0_us_, pool_, out_of_rotation());
  {
    std::lock_guard<std::mutex> s(stats_mu_);
    last_ = d;
    if (d.action != manager::ScaleDecision::Action::kNone) {
      desired_ = d.before.up + d.before.starting +
                 (d.action == manager::ScaleDecision::Action::kScaleOut ? d.count : -d.count);
      events_by_reason_[d.reason]++;
    }
  }
  if (d.action != manager::ScaleDecision::Action::kNone) say(d.log_line(scaler_.forecaster_name()));
  return d;
}

void ServingAutoscaler::request_stop() {
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    stop_ = true;
  }
  run_cv_.notify_all();
}

bool ServingAutoscaler::stop_requested() {
  std::lock_guard<std::mutex> lock(run_mu_);
  return stop_;
}

void ServingAutoscaler::stop() {
  request_stop();
  std::function<void()> close;
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    if (detached_) return;
    detached_ = true;
    close = close_gate_;
  }
  if (close) close();
  pool_.set_state_handler(nullptr);
  pool_.set_drain_hook(nullptr);
}

std::string ServingAutoscaler::metrics_text() {
  namespace prom = net::prom;
  const manager::PoolCounts counts = manager::pool_counts(pool_.list_workers(), out_of_rotation());
  std::lock_guard<std::mutex> s(stats_mu_);
  std::string out;
  net::prom::family(
      out, "lull_autoscale_workers", "gauge",
      "Workers the autoscaler wants (desired) and the pool's workers by state; out_of_rotation: up in the "
      "pool but taken out of rotation (outlier ejection, failed health checks), not counted up.");
  net::prom::sample(out, "lull_autoscale_workers{state=\"desired\"}", desired_);
  net::prom::sample(out, "lull_autoscale_workers{state=\"starting\"}", counts.starting);
  net::prom::sample(out, "lull_autoscale_workers{state=\"up\"}", counts.up);
  net::prom::sample(out, "lull_autoscale_workers{state=\"draining\"}", counts.draining);
  net::prom::sample(out, "lull_autoscale_workers{state=\"out_of_rotation\"}", counts.out_of_rotation);
  const std::string forecast_help =
      "The load forecast over the lead time at the last decision (" + scaler_.forecaster_name() + ").";
  net::prom::family(out, "lull_autoscale_forecast_qps", "gauge", forecast_help.c_str());
  net::prom::sample(out, "lull_autoscale_forecast_qps", last_.forecast_qps);
  net::prom::family(out, "lull_autoscale_envelope_qps", "gauge", "The arrival envelope's rate at the last decision.");
  net::prom::sample(out, "lull_autoscale_envelope_qps", last_.envelope_qps);
  net::prom::family(out, "lull_autoscale_needed_workers", "gauge",
                    "Workers the forecast (or the envelope) needed at the last decision.");
  net::prom::sample(out, "lull_autoscale_needed_workers", last_.need);
  net::prom::family(out, "lull_autoscale_scale_events_total", "counter", "Scale decisions that acted, by reason.");
  for (const char* reason : {"forecast", "envelope", "floor", "forecast_lower"}) {
    const auto it = events_by_reason_.find(reason);
    net::prom::sample(out, std::string("lull_autoscale_scale_events_total{reason=\"") + reason + "\"}",
                      it == events_by_reason_.end() ? 0.0 : static_cast<double>(it->second));
  }
  net::prom::family(out, "lull_autoscale_worker_failures_total", "counter",
                    "Workers that failed, by when: start (the actuator's command or the checks), up, draining.");
  for (const char* phase : {"start", "up", "draining"}) {
    const auto it = failures_by_phase_.find(phase);
    net::prom::sample(out, std::string("lull_autoscale_worker_failures_total{phase=\"") + phase + "\"}",
                      it == failures_by_phase_.end() ? 0.0 : static_cast<double>(it->second));
  }
  net::prom::family(out, "lull_autoscale_workers_not_ready_total", "counter",
                    "Workers taken out of rotation because their pool says they are no longer ready (not failed: they "
                    "rejoin once up, e.g. a pod whose container Kubernetes restarts).");
  net::prom::sample(out, "lull_autoscale_workers_not_ready_total", static_cast<double>(not_ready_));
  const std::int64_t now = last_tick_us_;
  net::prom::family(
      out, "lull_autoscale_hold_seconds", "gauge",
      "Time left, at the last tick, before scaling resumes after failed starts (backoff); 0 when not on hold.");
  net::prom::sample(out, "lull_autoscale_hold_seconds",
                    hold_until_us_ > now ? static_cast<double>(hold_until_us_ - now) * 1e-6 : 0.0);
  if (!last_failure_.empty()) {
    net::prom::family(out, "lull_autoscale_last_failure_info", "gauge", "The last worker failure and its reason.");
    net::prom::sample(out,
                      "lull_autoscale_last_failure_info{worker=\"" + net::prom::escape(last_failure_worker_) +
                          "\",reason=\"" + net::prom::escape(last_failure_) + "\"}",
                      1);
  }
  if (options_.pool_metrics) out += options_.pool_metrics();
  return out;
}

}  // namespace lull::pools
