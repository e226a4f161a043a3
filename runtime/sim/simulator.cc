#include "runtime/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "runtime/core/control_loop.h"
#include "runtime/core/dispatcher.h"
#include "runtime/core/fifo_dispatcher.h"
#include "runtime/sim/event_queue.h"
#include "runtime/sim/sim_backend.h"
#include "runtime/sim/virtual_time_provider.h"

namespace lull::sim {

SchedulerKind parse_scheduler_kind(const std::string& text) {
  if (text == "lull") return SchedulerKind::kLull;
  if (text == "jellyfish") return SchedulerKind::kJellyfish;
  if (text == "modelswitching") return SchedulerKind::kModelSwitching;
  throw std::invalid_argument("unknown scheduler '" + text + "' (expected lull, jellyfish or modelswitching)");
}

const char* scheduler_name(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::kLull:
      return "lull";
    case SchedulerKind::kJellyfish:
      return "jellyfish";
    case SchedulerKind::kModelSwitching:
      return "modelswitching";
  }
  return "?";
}

namespace {

// The workers' state through --fail / --workers-at events: a worker is
// available when provisioned and not failed. Integrates provisioned
// worker-seconds.
class WorkerPool {
 public:
  WorkerPool(int pool, int up)
      : in_pool_(static_cast<std::size_t>(pool), 0), failed_(static_cast<std::size_t>(pool), 0) {
    std::fill(in_pool_.begin(), in_pool_.begin() + up, 1);
    provisioned_ = up;
  }
  void apply(const WorkerEvent& e, core::Dispatcher& d, SimBackend& backend) {
    advance_to(e.time_us);
    const auto before = snapshot();
    if (e.kind == WorkerEvent::Kind::kPoolSize) {
      for (std::size_t w = 0; w < in_pool_.size(); ++w) in_pool_[w] = static_cast<int>(w) < e.value;
      provisioned_ = std::min<int>(e.value, static_cast<int>(in_pool_.size()));
    } else {
      failed_.at(static_cast<std::size_t>(e.value)) = e.kind == WorkerEvent::Kind::kFail;
    }
    for (std::size_t w = 0; w < in_pool_.size(); ++w) {
      const bool up = in_pool_[w] && !failed_[w];
      if (up != static_cast<bool>(before[w])) d.set_worker_available(static_cast<int>(w), up);
    }
    // After the Dispatcher has moved the worker's queue: its batch in flight
    // fails and is retried on a worker still up.
    if (e.kind == WorkerEvent::Kind::kFail) backend.fail_in_flight(e.value);
  }
  void advance_to(std::int64_t t_us) {
    if (t_us > last_us_) worker_us_ += static_cast<double>(provisioned_) * static_cast<double>(t_us - last_us_);
    last_us_ = std::max(last_us_, t_us);
  }
  double worker_seconds() const { return worker_us_ * 1e-6; }

 private:
  std::vector<char> snapshot() const {
    std::vector<char> up(in_pool_.size());
    for (std::size_t w = 0; w < up.size(); ++w) up[w] = in_pool_[w] && !failed_[w];
    return up;
  }
  std::vector<char> in_pool_, failed_;
  int provisioned_ = 0;
  std::int64_t last_us_ = 0;
  double worker_us_ = 0;
};

std::vector<PolicyUse> policies_used(const core::Dispatcher& d) {
  std::vector<PolicyUse> out;
  const auto& usage = d.usage();
  for (std::size_t id = 0; id < usage.size(); ++id) {
    if (usage[id].decisions == 0) continue;
    const core::PolicyChoice& c = d.catalog().entry(static_cast<int>(id));
    out.push_back(PolicyUse{c.workers, c.policy->load_qps, c.arrivals, c.policy->expected_accuracy,
                            c.policy->expected_violation_rate, usage[id]});
  }
  return out;
}

}  // namespace

SimResult run_simulation(const core::PolicyTable& table, const std::vector<core::BaselineChoice>* plan,
                         ArrivalSource& arrivals, LatencyModel& latency, const SimOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (plan &&
      (!options.worker_events.empty() || options.compiler || options.workers_up > 0 || options.autoscale.enabled))
    throw std::invalid_argument("worker events, autoscaling and online compilation apply to lull's scheduler only");
  if (options.autoscale.enabled && !options.worker_events.empty())
    throw std::invalid_argument(
        "--autoscale decides the workers itself: not with --fail, --workers-at or --workers-schedule");
  if (options.variants.enabled() && (plan || !options.worker_events.empty() || options.compiler))
    throw std::invalid_argument(
        "--variant-sets applies to lull's scheduler, without worker events or online compilation");
  std::vector<WorkerEvent> worker_events = options.worker_events;
  sort_worker_events(&worker_events);
  const int up = options.workers_up > 0 ? options.workers_up : table.workers;
  core::VirtualClock clock;
  std::unique_ptr<AutoscaledWorkers> scaler;
  if (options.autoscale.enabled)
    scaler = std::make_unique<AutoscaledWorkers>(
        options.autoscale, options.library.empty() ? std::vector<core::PolicyTable>{table} : options.library, clock,
        up);
  const int pool = scaler ? scaler->slots() : std::max({table.workers, up, workers_named(worker_events)});
  EventQueue events;
  SimBackend backend(pool, events, clock, latency);
  if (options.dispatch_end_s > 0)
    backend.set_dispatch_end_us(static_cast<std::int64_t>(std::llround(options.dispatch_end_s * 1e6)));
  core::SchedulerOptions so;
  so.load_window_us = options.load_window_us;
  so.arrival_thinning = options.arrival_thinning;
  std::unique_ptr<VirtualTimeProvider> provider;
  if (options.compiler && !plan)
    provider = std::make_unique<VirtualTimeProvider>(*options.compiler, clock, options.compile_delay_us);
  std::unique_ptr<core::Scheduler> sched;
  core::Dispatcher* lull = nullptr;
  std::string beyond;  // the first estimate beyond the library
  if (plan) {
    sched = std::make_unique<core::FifoDispatcher>(table, *plan, clock, backend, so);
  } else {
    core::DispatcherPolicies dp;
    dp.library = options.library.empty() ? std::vector<core::PolicyTable>{table} : options.library;
    dp.pool_workers = pool;
    dp.available_at_start.assign(static_cast<std::size_t>(pool), 0);
    std::fill_n(dp.available_at_start.begin(), std::min(up, pool), 1);
    dp.provider = provider.get();
    auto d = std::make_unique<core::Dispatcher>(std::move(dp), clock, backend, so);
    lull = d.get();
    sched = std::move(d);
    lull->on_pattern_beyond_library([&beyond](const core::BurstinessEstimate& e, const ArrivalProcess&) {
      if (beyond.empty()) beyond = arrival_estimate_text(e.process);
    });
    if (scaler) scaler->attach(*lull);
  }
  std::unique_ptr<SimulatedVariantSwitch> variants;
  if (options.variants.enabled()) {
    variants = std::make_unique<SimulatedVariantSwitch>(
        options.variants, clock, [lull, s = scaler.get()](const std::vector<core::PolicyTable>& library) {
          for (const auto& t : library) lull->replace_policies(t);
          if (s) s->use_library(library);
        });
    backend.set_on_start([v = variants.get()](const core::BatchRequest& b) { v->on_dispatch(b); });
  }
  // The controllers, in the order they tick at equal times: the
  // autoscaler, then the variant switch (as lull serve's ControlLoop runs them).
  core::ControlLoop control(clock);
  if (scaler) control.add(*scaler);
  if (variants) control.add(*variants);
  WorkerPool workers(pool, up);
  SimStats stats(table, options.timeline);
  sched->on_batch_done([&stats, &backend](const core::BatchResult& r, std::int64_t now_us) {
    if (backend.reporting_undispatched())
      stats.on_not_dispatched(r);
    else
      stats.on_batch_done(r, now_us);
  });

  std::int64_t t_us = 0;
  core::QueryId next_id = 0;
  std::size_t next_worker_event = 0;
  if (arrivals.next(&t_us)) events.push(t_us, -1);
  while (!events.empty()) {
    // At equal times: a delivered policy, then worker events, then arrivals
    // and completions.
    const std::int64_t next_us = events.next_time_us();
    if (provider && provider->has_pending() && provider->next_ready_us() <= next_us) {
      clock.advance_to_us(std::max(clock.now_us(), provider->next_ready_us()));
      lull->add_policies(provider->pop_ready());
      continue;
    }
    if (next_worker_event < worker_events.size() && worker_events[next_worker_event].time_us <= next_us) {
      clock.advance_to_us(std::max(clock.now_us(), worker_events[next_worker_event].time_us));
      workers.apply(worker_events[next_worker_event++], *lull, backend);
      continue;
    }
    // A worker comes up or the autoscaler's tick; a load check or a variant's models loaded.
    if (control.run_next_due(next_us)) continue;
    const SimEvent e = events.pop();
    clock.advance_to_us(e.time_us);
    if (e.worker >= 0) {
      backend.complete(e.worker, e.batch);
      if (scaler) scaler->on_batch_done(e.worker);
      continue;
    }
    const core::QueryId id = next_id++;
    stats.on_arrival(id, e.time_us);  // before the scheduler can possibly complete it
    if (scaler) scaler->record_arrival(e.time_us);
    if (variants) variants->record_arrival();
    sched->on_arrival(id);
    if (options.timeline) {
      const core::CompiledPolicy& in_use =
          lull ? *lull->current_choice().policy : table.policies[sched->current_grid_point()];
      stats.on_load(e.time_us, sched->last_estimate_qps(), in_use.load_qps, in_use.expected_violation_rate);
      if (lull) stats.on_pattern(e.time_us, lull->burstiness_estimate(), lull->current_choice().arrivals);
    }
    if (arrivals.next(&t_us)) events.push(std::max(t_us, e.time_us), -1);
  }
  workers.advance_to(clock.now_us());

  SimResult r;
  r.scheduler = plan ? "fifo" : "lull";
  r.arrivals = stats.arrivals();
  r.completed = stats.completed();
  r.dropped = 0;  // no drop policy is configured in the simulator
  r.not_dispatched_at_end = stats.not_dispatched();
  if (r.completed + r.dropped + r.not_dispatched_at_end != r.arrivals || backend.in_flight() != 0)
    throw std::logic_error("simulation lost queries: " + std::to_string(r.arrivals) + " arrived, " +
                           std::to_string(r.completed) + " completed, " + std::to_string(r.dropped) + " dropped, " +
                           std::to_string(r.not_dispatched_at_end) + " not dispatched at end");
  r.satisfied = stats.satisfied();
  r.violated = stats.violated();
  r.accuracy_sum = stats.accuracy_sum();
  finish(r);
  r.usage = sched->usage();
  if (lull) r.policies_used = policies_used(*lull);
  if (plan) r.plan = *plan;
  r.satisfied_per_model = stats.per_model();
  r.new_policy_events = sched->new_policy_events();
  if (lull) {
    r.pattern_switches = lull->pattern().switches();
    r.pattern_beyond_events = provider ? 0 : lull->pattern().beyond_events();
    r.pattern_beyond_first = beyond;
  }
  r.simulated_s = static_cast<double>(clock.now_us()) * 1e-6;
  r.worker_seconds = workers.worker_seconds();
  if (scaler) {
    r.worker_seconds = scaler->worker_seconds(clock.now_us());
    r.autoscale = scaler->report();
  }
  if (variants) r.variants = variants->report();
  if (provider) {
    r.compilations = provider->compilations();
    r.compile_wall_s = provider->compile_wall_s();
  }
  r.timeline = stats.timeline();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

SimResult simulate(const core::PolicyTable& table, ArrivalSource& arrivals, LatencyModel& latency,
                   const SimOptions& options) {
  if (options.scheduler == SchedulerKind::kLull) {
    SimResult r = run_simulation(table, nullptr, arrivals, latency, options);
    r.scheduler = "lull";
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<OfflineTrial> trials;
  const std::vector<core::BaselineChoice> plan = options.scheduler == SchedulerKind::kJellyfish
                                                     ? core::jellyfish_plan(table)
                                                     : model_switching_plan(table, latency, options, &trials);
  const double plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SimResult r = run_simulation(table, &plan, arrivals, latency, options);
  r.offline_trials = std::move(trials);
  r.scheduler = scheduler_name(options.scheduler);
  r.plan_wall_s = plan_s;
  return r;
}

}  // namespace lull::sim
