// lull simulate: runs a policy set or library (or a baseline) in the
// discrete-event simulator, optionally with worker failures, worker-count
// changes, online compilation or the autoscaler (--autoscale), and writes a
// JSON result (and optionally a per-second timeline).
#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/autoscale_flags.h"
#include "cli/commands.h"
#include "cli/online_compile.h"
#include "cli/option_ranges.h"
#include "cli/output_file.h"
#include "cli/parse_options.h"
#include "cli/simulate_fleet.h"
#include "cli/variant_sets.h"
#include "runtime/core/policy_loader.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/raw_profiles.h"
#include "runtime/sim/result_json.h"
#include "runtime/sim/sharded_simulation.h"
#include "runtime/sim/simulator.h"
#include "runtime/sim/trace_spec.h"
#include "runtime/sim/worker_events.h"
#include "schema/fleet_file.h"
#include "schema/input_limits.h"

namespace lull::cli {
namespace po = boost::program_options;

namespace {

// `--help`'s examples: each runs as written from the repository root (ctest cli.help_examples).
const char* const kSimulateExamples =
    "  lull simulate --policies policies/example-synthetic.pb --workers 4 --trace constant:120:30 --seed 1\n"
    "  # worker 3 down from 20 s to 40 s, the result as JSON\n"
    "  lull simulate --policies policies/example-synthetic.pb --workers 4 --trace constant:150:60 --fail 3@20:20 "
    "--seed 1 --out /tmp/fail.json\n";

std::vector<std::string> model_names(const core::PolicyTable& t) {
  std::vector<std::string> names;
  for (const auto& m : t.models) names.push_back(m.name);
  return names;
}

// "p95" (the compiled percentile, deterministic) or "sampled".
bool parse_latency_mode(const std::string& text, const core::PolicyTable& table) {
  if (text == "sampled") return true;
  if (text.size() > 1 && text[0] == 'p') {
    double p = 0;
    try {
      p = std::stod(text.substr(1));
    } catch (const std::exception&) {
      throw UsageError("--latency '" + text + "': expected pNN (the compiled percentile) or sampled");
    }
    if (table.percentile > 0 && std::abs(p - table.percentile) > 1e-9)
      throw UsageError("--latency " + text + ": the policy set's latencies are compiled at p" +
                       std::to_string(static_cast<int>(table.percentile)) +
                       "; recompile to simulate another percentile");
    return false;
  }
  throw UsageError("--latency '" + text + "': expected pNN (the compiled percentile) or sampled");
}

}  // namespace

int run_simulate(int argc, char** argv) {
  std::string policies, trace, replay = "hold", arrivals = "poisson", scheduler = "lull", latency = "p95", profiles,
                               out, timeline;
  int workers = 0, shards = 1;
  std::uint64_t seed = 1;
  double window_ms = 500, ms_profile_s = 300, trace_scale = 1, compile_delay_ms = 300, load_qps = 0, duration_s = 300;
  std::vector<std::string> fails, workers_at;
  std::string workers_schedule;
  OnlineCompileFlags online_flags;
  AutoscaleFlags autoscale_flags;
  VariantChoiceFlags variant_flags;
  double variant_load_delay_ms = 5000;
  po::options_description opts("lull simulate options");
  // clang-format off
  opts.add_options()
      ("policies", po::value(&policies), "policy set, policy library or fleet policy file (from lull compile)")
      ("load-qps", po::value(&load_qps), "fleet policy file: the fleet's load, constant for --duration-s (or --trace)")
      ("duration-s", po::value(&duration_s)->default_value(duration_s), "fleet policy file: length of the --load-qps run")
      ("workers", po::value(&workers),
       "workers up at the start; must match a single policy set unless --online-compile on (a library: picks by it)")
      ("shards", po::value(&shards),
       "G: the --workers as G lull shards of workers/G behind a per-request round-robin balancer (arrival i to "
       "shard i mod G), each serving the library's set for --workers at 1/G of the load (docs/operators-guide.md)")
      ("trace", po::value(&trace), "constant:QPS:SECONDS | rate-file:PATH (lines '<second> <QPS>') | arrivals:PATH (one time in s per line) | "
       "mmpp:QPS:RATIO:STATE_S:SECONDS | sinusoid:QPS:AMPLITUDE:PERIOD_S:SECONDS (a moving rate, drawn with --seed)")
      ("trace-scale", po::value(&trace_scale)->default_value(trace_scale), "multiply every rate of a constant: or rate-file: trace")
      ("replay", po::value(&replay)->default_value(replay),
       "hold: run the trace as written and serve every query | reference: the reference simulator's replay "
       "(rate file: per-second rates, 300 s, wrap-around; queries still queued at the end are not counted)")
      ("arrivals", po::value(&arrivals)->default_value(arrivals), "arrival process for constant/rate traces: poisson | gamma:CV2 | batch:D, or steps SPEC@START_S,... "
       "(poisson@0,gamma:4@60: the process changes at those seconds)")
      ("scheduler", po::value(&scheduler)->default_value(scheduler), "lull | jellyfish | modelswitching")
      ("latency", po::value(&latency)->default_value(latency), "pNN: deterministic at the compiled percentile | sampled: drawn from --profiles")
      ("profiles", po::value(&profiles), "lull profile JSON or a RAMSIS-artifact folder: raw samples for --latency sampled; what --online-compile on compiles from")
      ("seed", ranged_value(&seed)->default_value(seed), "random seed (arrivals, sampled latencies, baseline profiling)")
      ("load-window-ms", po::value(&window_ms)->default_value(window_ms), "load monitor's sliding window")
      ("ms-profile-s", po::value(&ms_profile_s)->default_value(ms_profile_s), "length of each ModelSwitching offline run")
      ("fail", po::value(&fails)->composing(), "WORKER@T:DURATION: the worker fails at T s (its batch in flight fails "
       "and is retried elsewhere) and is back DURATION s later; repeatable")
      ("workers-at", po::value(&workers_at)->composing(), "T:K: from T s on, workers 0..K-1 are provisioned; repeatable")
      ("workers-schedule", po::value(&workers_schedule), "PLAN.json from lull plan --trace: its schedule's worker counts over time")
      ("compile-delay-ms", po::value(&compile_delay_ms)->default_value(compile_delay_ms),
       "online compilation: virtual time one compilation takes (deterministic)")
      ("out", po::value(&out), "result JSON file ('-' for stdout); without it, the summary line alone")
      ("timeline", po::value(&timeline), "optional per-second CSV ('-' for stdout)");
  // clang-format on
  add_online_compile_options(opts, online_flags);
  add_autoscale_options(opts, autoscale_flags);
  add_variant_choice_options(opts, variant_flags);
  // clang-format off
  opts.add_options()("variant-load-delay-ms", po::value(&variant_load_delay_ms)->default_value(variant_load_delay_ms),
                     "--variant-sets: virtual time a switch takes to load its new models on every worker before its "
                     "policies are used (fixed; a switch that loads nothing takes effect at once)");
  // clang-format on
  po::variables_map vm;
  ParseExtras extras;
  extras.vm = &vm;
  extras.examples = kSimulateExamples;
  if (!parse_command_line(
          argc, argv, opts,
          "usage: lull simulate --policies SET.pb --workers K --trace SPEC [--out RESULT.json] [options]", extras))
    return 0;
  if (vm.count("policies") && is_fleet_policy_file(policies))
    return run_simulate_fleet(vm, FleetSimFlags{policies, trace, replay, arrivals, latency, out, load_qps, duration_s,
                                                trace_scale, seed, autoscale_flags});
  if (vm.count("load-qps") || !vm["duration-s"].defaulted())
    throw UsageError(std::string(vm.count("load-qps") ? "--load-qps" : "--duration-s") +
                     " applies to a fleet policy file, and '" + policies +
                     "' is none (for a policy set: --trace constant:QPS:SECONDS)");
  for (const char* required : {"policies", "workers", "trace"})
    if (!vm.count(required)) throw UsageError(std::string("--") + required + " is required (lull simulate --help)");
  check_range("--workers", workers, 1, limits::kMaxWorkers);
  const bool sharded = vm.count("shards") > 0;
  if (sharded) {
    check_range("--shards", shards, 1, workers);
    if (workers % shards != 0)
      throw UsageError("--shards " + std::to_string(shards) + ": --workers " + std::to_string(workers) +
                       " does not divide into " + std::to_string(shards) + " equal shards");
  }
  check_positive_range("--load-window-ms", window_ms, limits::kMaxIntervalMs);
  check_positive_range("--ms-profile-s", ms_profile_s, limits::kMaxTraceSeconds);
  check_range("--compile-delay-ms", compile_delay_ms, 0, limits::kMaxIntervalMs);
  const bool online = online_compile_enabled(online_flags, profiles);

  sim::SimOptions options;
  sim::TraceSpec spec;
  std::vector<ArrivalStep> process;
  try {
    options.scheduler = sim::parse_scheduler_kind(scheduler);
    spec = sim::parse_trace_spec(trace);
    spec.seed = seed;
    sim::set_replay_mode(&spec, replay);
    sim::set_trace_scale(&spec, trace_scale);
    process = parse_arrival_schedule(arrivals, "--arrivals");
    for (const auto& f : fails)
      for (const auto& e : sim::parse_fail(f)) options.worker_events.push_back(e);
    for (const auto& w : workers_at) options.worker_events.push_back(sim::parse_workers_at(w));
    if (!workers_schedule.empty())
      for (const auto& e : sim::read_workers_schedule(workers_schedule)) options.worker_events.push_back(e);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  // A worker --fail names must exist: the run's workers, or a pool --workers-at / --workers-schedule grows to.
  int pool = workers;
  for (const auto& e : options.worker_events)
    if (e.kind == sim::WorkerEvent::Kind::kPoolSize) pool = std::max(pool, e.value);
  for (const auto& f : fails)
    if (sim::parse_fail(f).front().value >= pool)
      throw UsageError("--fail '" + f + "': worker " + std::to_string(sim::parse_fail(f).front().value) +
                       " does not exist (workers are numbered 0.." + std::to_string(pool - 1) + ")");
  const bool lull_scheduler = options.scheduler == sim::SchedulerKind::kLull;
  if (!lull_scheduler && (online || !options.worker_events.empty() || autoscale_flags.enabled))
    throw UsageError(
        "--fail, --workers-at, --workers-schedule, --online-compile and --autoscale apply to --scheduler lull only");
  if (sharded && (!lull_scheduler || online || !options.worker_events.empty() || autoscale_flags.enabled ||
                  !variant_flags.sets.empty() || !timeline.empty()))
    throw UsageError("--shards " + std::to_string(shards) +
                     ": with --scheduler lull only, and not with --fail, --workers-at, --workers-schedule, "
                     "--online-compile, --autoscale, --variant-sets or --timeline (each is per process)");
  if (autoscale_flags.enabled && !options.worker_events.empty())
    throw UsageError("--autoscale decides the workers itself: not with --fail, --workers-at or --workers-schedule");
  options.autoscale = autoscale_config(autoscale_flags, seed);
  const bool with_variants = !variant_flags.sets.empty();
  if (with_variants && (!lull_scheduler || online || !options.worker_events.empty()))
    throw UsageError(
        "--variant-sets applies to --scheduler lull only, and not with --fail, --workers-at, "
        "--workers-schedule or --online-compile");
  if (with_variants) {
    check_variant_choice(variant_flags);
    check_range("--variant-load-delay-ms", variant_load_delay_ms, 0, limits::kMaxIntervalMs);
  }
  std::vector<core::PolicyTable> library = core::load_policy_library(policies, core::PolicyExpectations{});
  if (library.size() == 1 && !online && !autoscale_flags.enabled)  // one set, as before: its worker count is the run's
    library.front() = core::load_policy_table(policies, core::PolicyExpectations{"", workers, 0});
  // The set the run starts on: the nearest worker count not above --workers.
  std::size_t start = 0;
  for (std::size_t i = 0; i < library.size(); ++i)
    if (library[i].workers <= workers) start = i;
  const core::PolicyTable table = library[start];
  if (with_variants) {
    options.variants.variants = load_variant_sets(variant_flags.sets, library, policies);
    options.variants.hysteresis = variant_flags.hysteresis;
    options.variants.dwell_us = static_cast<std::int64_t>(std::llround(variant_flags.dwell_s * 1e6));
    options.variants.interval_us = static_cast<std::int64_t>(std::llround(variant_flags.interval_ms * 1000));
    options.variants.load = variant_flags.load;
    options.variants.load_delay_us = static_cast<std::int64_t>(std::llround(variant_load_delay_ms * 1000));
  }
  if (lull_scheduler) {
    options.workers_up = workers;
    options.library = std::move(library);
  }
  std::unique_ptr<CompilerPolicySource> source;
  if (online) {
    source = std::make_unique<CompilerPolicySource>(policies, profiles, online_flags);
    options.compiler = source.get();
    options.compile_delay_us = static_cast<std::int64_t>(std::llround(compile_delay_ms * 1000));
  }
  const bool sampled = parse_latency_mode(latency, table);
  if (sampled && profiles.empty()) throw UsageError("--latency sampled needs --profiles FILE_OR_DIR");

  options.seed = seed;
  options.load_window_us = static_cast<std::int64_t>(window_ms * 1000);
  options.model_switching_profile_s = ms_profile_s;
  options.dispatch_end_s = sim::trace_dispatch_end_s(spec);
  options.timeline = !timeline.empty();
  std::unique_ptr<sim::LatencyModel> lat_model;
  sim::RawProfiles raw;
  if (sampled) {
    raw = sim::load_raw_profiles(profiles, model_names(table), table.slo_us / 1000.0);
    lat_model = std::make_unique<sim::SampledLatency>(table, raw, seed ^ 0x5eed5eedULL);
  } else {
    lat_model = std::make_unique<sim::CompiledLatency>(table);
  }
  sim::SimResult r;
  try {
    if (sharded) {
      sim::ShardedRun run{options.library, shards, workers / shards,
                          [&] { return sim::make_arrival_source(spec, process, seed); },
                          [&](const core::PolicyTable& t, int index) -> std::unique_ptr<sim::LatencyModel> {
                            if (!sampled) return std::make_unique<sim::CompiledLatency>(t);
                            return std::make_unique<sim::SampledLatency>(
                                t, raw, seed ^ 0x5eed5eedULL ^ (static_cast<std::uint64_t>(index) << 32));
                          }};
      r = sim::simulate_shards(run, options);
    } else {
      const auto arrival_source = sim::make_arrival_source(spec, process, seed);
      r = sim::simulate(table, *arrival_source, *lat_model, options);
    }
  } catch (const std::invalid_argument& e) {  // an autoscaler setting or shard count the library cannot meet
    throw UsageError((sharded ? "--shards " + std::to_string(shards) + ": " : std::string()) + e.what());
  }

  if (r.pattern_beyond_events > 0)
    std::fprintf(stderr,
                 "lull simulate: warning: arrivals looked like %s, burstier than every policy in --policies (%d "
                 "time(s)); the most bursty set served (--online-compile on compiles one for the pattern)\n",
                 r.pattern_beyond_first.c_str(), r.pattern_beyond_events);
  if (!out.empty())  // without --out, the summary line alone
    write_output(out, sim::result_to_json(r, table, sim::RunInfo{policies, trace, replay, arrivals, latency, seed}));
  if (!timeline.empty()) write_output(timeline, sim::timeline_to_csv(r));
  // The summary goes where the outputs do not.
  std::ostream& summary = is_stdout(out) || is_stdout(timeline) ? std::cerr : std::cout;
  summary << r.scheduler;
  if (sharded) summary << " (" << shards << " shards of " << workers / shards << ")";
  summary << ": " << r.arrivals << " queries, accuracy per satisfied query " << r.accuracy_per_satisfied_query
          << ", violation rate " << r.violation_rate << ", dropped " << r.dropped;
  if (options.dispatch_end_s > 0) summary << ", not dispatched at end " << r.not_dispatched_at_end;
  if (online) summary << ", " << r.compilations << " online compilations";
  if (r.autoscale) {
    summary << ", " << r.worker_seconds << " worker-seconds, " << r.autoscale->scale_events.size() << " scale events";
    if (!autoscale_flags.log.empty()) {
      std::string lines;
      for (const auto& l : r.autoscale->log) lines += l + "\n";
      if (autoscale_flags.log == "-")
        std::cerr << lines;
      else
        write_output(autoscale_flags.log, lines);
    }
  }
  if (r.variants) summary << ", " << r.variants->switches.size() << " variant switches";
  summary << ", " << r.wall_s + r.plan_wall_s << " s\n";
  return 0;
}

}  // namespace lull::cli
