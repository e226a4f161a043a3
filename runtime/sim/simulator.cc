#include "runtime/sim/simulator.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "runtime/dispatcher.h"
#include "runtime/fifo_dispatcher.h"
#include "runtime/sim/event_queue.h"
#include "runtime/sim/sim_backend.h"

namespace lull::sim {

SchedulerKind parse_scheduler_kind(const std::string& text) {
  if (text == "lull") return SchedulerKind::kLull;
  if (text == "jellyfish") return SchedulerKind::kJellyfish;
  if (text == "modelswitching") return SchedulerKind::kModelSwitching;
  throw std::invalid_argument("unknown scheduler '" + text + "' (expected lull, jellyfish or modelswitching)");
}

const char* scheduler_name(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::kLull: return "lull";
    case SchedulerKind::kJellyfish: return "jellyfish";
    case SchedulerKind::kModelSwitching: return "modelswitching";
  }
  return "?";
}

SimResult run_simulation(const runtime::PolicyTable& table, const std::vector<runtime::BaselineChoice>* plan,
                         ArrivalSource& arrivals, LatencyModel& latency, const SimOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  runtime::VirtualClock clock;
  EventQueue events;
  SimBackend backend(table.workers, events, clock, latency);
  if (options.dispatch_end_s > 0) backend.set_dispatch_end_us(static_cast<std::int64_t>(std::llround(options.dispatch_end_s * 1e6)));
  runtime::SchedulerOptions so;
  so.load_window_us = options.load_window_us;
  std::unique_ptr<runtime::Scheduler> sched;
  if (plan) sched = std::make_unique<runtime::FifoDispatcher>(table, *plan, clock, backend, so);
  else sched = std::make_unique<runtime::Dispatcher>(table, clock, backend, so);
  SimStats stats(table, options.timeline);
  sched->on_batch_done([&stats, &backend](const runtime::BatchResult& r, std::int64_t now_us) {
    if (backend.reporting_undispatched()) stats.on_not_dispatched(r);
    else stats.on_batch_done(r, now_us);
  });

  std::int64_t t_us = 0;
  runtime::QueryId next_id = 0;
  if (arrivals.next(&t_us)) events.push(t_us, -1);
  while (!events.empty()) {
    const SimEvent e = events.pop();
    clock.advance_to_us(e.time_us);
    if (e.worker >= 0) {
      backend.complete(e.worker);
      continue;
    }
    const runtime::QueryId id = next_id++;
    stats.on_arrival(id, e.time_us);  // before the scheduler can possibly complete it
    sched->on_arrival(id);
    if (options.timeline)
      stats.on_load(e.time_us, sched->last_estimate_qps(), table.policies[sched->current_grid_point()].load_qps);
    if (arrivals.next(&t_us)) events.push(std::max(t_us, e.time_us), -1);
  }

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
  r.accuracy_per_satisfied_query = r.satisfied ? stats.accuracy_sum() / static_cast<double>(r.satisfied) : 0;
  r.violation_rate = r.completed ? static_cast<double>(r.violated) / static_cast<double>(r.completed) : 0;
  r.usage = sched->usage();
  if (plan) r.plan = *plan;
  r.satisfied_per_model = stats.per_model();
  r.new_policy_events = sched->new_policy_events();
  r.simulated_s = static_cast<double>(clock.now_us()) * 1e-6;
  r.timeline = stats.timeline();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

SimResult simulate(const runtime::PolicyTable& table, ArrivalSource& arrivals, LatencyModel& latency,
                   const SimOptions& options) {
  if (options.scheduler == SchedulerKind::kLull) {
    SimResult r = run_simulation(table, nullptr, arrivals, latency, options);
    r.scheduler = "lull";
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<OfflineTrial> trials;
  const std::vector<runtime::BaselineChoice> plan = options.scheduler == SchedulerKind::kJellyfish
                                                        ? runtime::jellyfish_plan(table)
                                                        : model_switching_plan(table, latency, options, &trials);
  const double plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SimResult r = run_simulation(table, &plan, arrivals, latency, options);
  r.offline_trials = std::move(trials);
  r.scheduler = scheduler_name(options.scheduler);
  r.plan_wall_s = plan_s;
  return r;
}

}  // namespace lull::sim
