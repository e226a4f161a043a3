// The autoscaler and simulated pool inside the simulator (why: see
// autoscaled_workers.h).
#include "runtime/sim/autoscaled_workers.h"

#include <algorithm>
#include <stdexcept>

namespace lull::sim {

AutoscaledWorkers::AutoscaledWorkers(const SimAutoscale& config, const std::vector<core::PolicyTable>& library,
                                     core::VirtualClock& clock, int initial_up)
    : clock_(clock),
      capacity_(library, config.target),
      scaler_(capacity_.table(), config.options, clock.now_us()),
      pool_(clock, manager::ProvisioningDelay::parse(config.provisioning, config.seed), initial_up),
      slots_(2 * scaler_.ceiling_workers()),
      next_tick_us_(clock.now_us() + config.options.tick_us),
      desired_(initial_up),
      active_(initial_up) {
  if (initial_up > scaler_.ceiling_workers())
    throw std::invalid_argument("--workers " + std::to_string(initial_up) +
                                " is above the autoscaler's largest worker count (" +
                                std::to_string(scaler_.ceiling_workers()) + ")");
  for (const auto& w : pool_.list_workers()) slots_.take(w.id);  // slots 0..initial_up-1
  report_.forecast = scaler_.forecaster_name();
  report_.provisioning = config.provisioning;
  report_.options = config.options;
  report_.floor = scaler_.floor_workers();
  report_.ceiling = scaler_.ceiling_workers();
  report_.capacity = scaler_.capacity().rows();
  report_.target = config.target;
  report_.max_slots_used = initial_up;
  for (const auto& w : pool_.list_workers()) state_of_[w.id] = w.state;
  counts_.up = initial_up;
  sample();
}

void AutoscaledWorkers::attach(core::Dispatcher& dispatcher) {
  dispatcher_slots_ = std::make_unique<DispatcherSlots>(dispatcher);
  dispatcher_ = &dispatcher;
  pool_.set_state_handler([this](const manager::WorkerInfo& w) { on_state(w); });
  pool_.set_drain_hook(
      [this](const std::string& id, std::function<void()> drained) { on_drain(id, std::move(drained)); });
}

std::int64_t AutoscaledWorkers::next_tick_us() const {
  const std::int64_t change = pool_.next_change_us();
  return change >= 0 ? std::min(change, next_tick_us_) : next_tick_us_;
}

void AutoscaledWorkers::use_library(const std::vector<core::PolicyTable>& library) {
  scaler_.set_capacity(capacity_.use_library(library));
}

void AutoscaledWorkers::charge(std::int64_t now_us) {
  if (now_us > charged_us_) worker_us_ += static_cast<double>(active_) * static_cast<double>(now_us - charged_us_);
  charged_us_ = std::max(charged_us_, now_us);
}

double AutoscaledWorkers::worker_seconds(std::int64_t end_us) {
  charge(end_us);
  return worker_us_ * 1e-6;
}

void AutoscaledWorkers::sample() {
  const WorkerCountSample s{static_cast<double>(clock_.now_us()) * 1e-6, desired_, counts_.starting, counts_.up,
                            counts_.draining};
  // One entry per time (the last counts then), and only where the counts
  // change: a second change at the same time that returns to the counts
  // before it leaves no entry (it left the earlier counts repeated).
  auto& v = report_.workers_over_time;
  if (!v.empty() && v.back().t_s == s.t_s) v.pop_back();
  if (v.empty() || v.back().desired != s.desired || v.back().starting != s.starting || v.back().up != s.up ||
      v.back().draining != s.draining)
    v.push_back(s);
}

void AutoscaledWorkers::on_state(const manager::WorkerInfo& w) {
  charge(clock_.now_us());
  using manager::WorkerState;
  const auto count_of = [this](WorkerState st) -> int* {
    return st == WorkerState::kUp         ? &counts_.up
           : st == WorkerState::kStarting ? &counts_.starting
           : st == WorkerState::kDraining ? &counts_.draining
                                          : nullptr;
  };
  const auto prev = state_of_.find(w.id);
  if (prev != state_of_.end())
    if (int* c = count_of(prev->second)) --*c;
  if (int* c = count_of(w.state)) ++*c;
  state_of_[w.id] = w.state;
  if (w.state == WorkerState::kStopped || w.state == WorkerState::kFailed) state_of_.erase(w.id);
  if (w.state == WorkerState::kStarting) {
    ++active_;
  } else if (w.state == WorkerState::kUp) {
    const int slot = slots_.take(w.id);
    if (slot < 0) throw std::logic_error("autoscaled simulation: no free worker slot");
    report_.max_slots_used = std::max(report_.max_slots_used, slot + 1);
    dispatcher_slots_->join(slot, "", "");
  } else if (w.state == WorkerState::kStopped || w.state == WorkerState::kFailed) {
    --active_;
    const int slot = slots_.release(w.id);
    if (slot >= 0) dispatcher_slots_->leave(slot, w.failure);
  }
  sample();
}

void AutoscaledWorkers::on_drain(const std::string& id, std::function<void()> drained) {
  const int slot = slots_.slot_of(id);
  if (slot < 0) throw std::logic_error("autoscaled simulation: draining worker " + id + ", which holds no slot");
  dispatcher_slots_->drain(slot, std::move(drained));
}

void AutoscaledWorkers::on_batch_done(int slot) { dispatcher_slots_->on_batch_done(slot); }

void AutoscaledWorkers::tick(std::int64_t now) {
  pool_.poll();
  if (now < next_tick_us_) return;
  next_tick_us_ = now + scaler_.options().tick_us;
  if (dispatcher_)
    if (auto table = capacity_.follow(dispatcher_->pattern().current())) {
      scaler_.set_capacity(std::move(*table));
      report_.capacity_patterns.push_back({static_cast<double>(now) * 1e-6, capacity_.pattern()});
    }
  const manager::ScaleDecision d = scaler_.step(now, pool_);
  if (d.action == manager::ScaleDecision::Action::kNone) return;
  desired_ =
      d.before.up + d.before.starting + (d.action == manager::ScaleDecision::Action::kScaleOut ? d.count : -d.count);
  report_.scale_events.push_back(d);
  report_.log.push_back(d.log_line(scaler_.forecaster_name()));
  sample();
}

}  // namespace lull::sim
