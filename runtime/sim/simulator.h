#pragma once
// The discrete-event simulator: a virtual clock and an event queue drive the
// runtime's own schedulers (lull's Dispatcher or the baselines'
// FifoDispatcher) over a simulated backend. Every arrival is accounted for:
// a run that ends with completed + dropped + not_dispatched_at_end !=
// arrivals throws.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/baseline_plan.h"
#include "runtime/core/policy_provider.h"
#include "runtime/core/policy_table.h"
#include "runtime/core/scheduler.h"
#include "runtime/sim/arrivals.h"
#include "runtime/sim/autoscaled_workers.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/model_switching.h"
#include "runtime/sim/sim_stats.h"
#include "runtime/sim/simulated_variant_switch.h"
#include "runtime/sim/worker_events.h"

namespace lull::sim {

enum class SchedulerKind { kLull, kJellyfish, kModelSwitching };
SchedulerKind parse_scheduler_kind(const std::string& text);  // throws std::invalid_argument
const char* scheduler_name(SchedulerKind kind);

struct SimOptions {
  SchedulerKind scheduler = SchedulerKind::kLull;
  std::int64_t load_window_us = 500'000;
  bool timeline = false;
  std::uint64_t seed = 1;                  // seeds ModelSwitching's offline runs
  double model_switching_profile_s = 300;  // length of each offline run (mdp-spec 8)
  // The reference's end of run (mdp-spec 8): queries still queued at this
  // time are not dispatched and not counted as served. 0: serve every query.
  double dispatch_end_s = 0;
  // Workers (lull's scheduler only). `table` is the set the run starts on;
  // `library` may hold the other worker counts of its policy library (the
  // Dispatcher picks by workers up and load). The pool is the largest of
  // table.workers and every worker the events name; workers_up start
  // available (0: table.workers).
  std::vector<core::PolicyTable> library;
  int workers_up = 0;
  std::vector<WorkerEvent> worker_events;  // --fail, --workers-at, --workers-schedule
  // Online compilation: the missing policy is compiled by `compiler` and
  // delivered `compile_delay_us` of virtual time after the (one) compiler is
  // free. nullptr: off (the stale policy).
  core::PolicyCompiler* compiler = nullptr;
  std::int64_t compile_delay_us = 300'000;
  // --autoscale: the manager's autoscaler drives a simulated worker pool
  // (from workers_up at the start); not with worker_events.
  SimAutoscale autoscale;
  // The run is shard I of G (sharded_simulation.h): G, so that lull's
  // burstiness estimate of every G-th arrival is the whole stream's.
  int arrival_thinning = 1;
  // --variant-sets: model variants switched with the load (lull's scheduler;
  // variants[0] is `library`); not with worker events or online compilation.
  SimVariants variants;
};

// A policy that took decisions: which (workers, load, arrival pattern) and how many.
struct PolicyUse {
  int workers = 0;
  double load_qps = 0;
  ArrivalProcess arrivals;  // the pattern the policy was compiled for
  double expected_accuracy = 0, expected_violation_rate = 0;
  core::GridUsage usage;
};

// One shard's numbers in a sharded run (sharded_simulation.h).
struct ShardResult : Outcomes {
  std::string label;  // "I/G"
  int workers = 0;    // K
  double worker_seconds = 0;
  int new_policy_events = 0;
};

struct SimResult : Outcomes {
  std::string scheduler;
  std::vector<core::GridUsage> usage;        // per compiled load (baselines)
  std::vector<PolicyUse> policies_used;      // lull: every policy that took decisions
  double worker_seconds = 0;                 // provisioned workers integrated over the run (failed ones included)
  int compilations = 0;                      // online compilations
  double compile_wall_s = 0;                 // host time they took (the run modelled compile_delay_us each)
  std::vector<core::BaselineChoice> plan;    // baselines only
  std::vector<OfflineTrial> offline_trials;  // ModelSwitching's offline runs
  std::vector<std::uint64_t> satisfied_per_model;
  int new_policy_events = 0;
  // lull: changes of the arrival pattern the policy was chosen for, and the
  // times the estimate went beyond every compiled pattern with no online
  // compilation (the first such estimate, as a process spec).
  int pattern_switches = 0;
  int pattern_beyond_events = 0;
  std::string pattern_beyond_first;
  double simulated_s = 0;  // virtual time of the last event
  double wall_s = 0;       // host time of the event loop
  double plan_wall_s = 0;  // host time spent building a baseline plan
  std::vector<TimelineRow> timeline;
  std::optional<AutoscaleReport> autoscale;  // with options.autoscale
  std::optional<VariantReport> variants;     // with options.variants
  std::vector<ShardResult> shards;           // a sharded run's shards (empty: one lull)
};

// Runs lull's dispatcher (plan == nullptr) or the FIFO dispatcher with `plan`.
SimResult run_simulation(const core::PolicyTable& table, const std::vector<core::BaselineChoice>* plan,
                         ArrivalSource& arrivals, LatencyModel& latency, const SimOptions& options);

// Builds the scheduler that options.scheduler names (computing a baseline's
// plan first) and runs it.
SimResult simulate(const core::PolicyTable& table, ArrivalSource& arrivals, LatencyModel& latency,
                   const SimOptions& options);

}  // namespace lull::sim
