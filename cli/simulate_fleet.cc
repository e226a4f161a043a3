#include "cli/simulate_fleet.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "cli/output_file.h"
#include "runtime/core/fleet_tables.h"
#include "runtime/sim/fleet_result_json.h"
#include "runtime/sim/fleet_sim.h"
#include "runtime/sim/trace_spec.h"
#include "schema/input_limits.h"
#include "schema/number_text.h"

namespace lull::cli {
namespace {

// The options a fleet run takes; anything else given is refused, since the
// fleet file fixes every group's workers, and each kind runs at its compiled percentile.
const std::set<std::string> kFleetOptions = {"policies", "trace",   "load-qps",  "duration-s", "trace-scale", "replay",
                                             "arrivals", "latency", "scheduler", "seed",       "out"};
// --autoscale's, per group; --max-violation is not among them (each class's
// own target sizes its groups).
const std::set<std::string> kFleetAutoscaleOptions = {"autoscale",
                                                      "autoscale-forecast",
                                                      "provisioning-delay",
                                                      "autoscale-lead-s",
                                                      "autoscale-envelope",
                                                      "autoscale-holdoff-s",
                                                      "autoscale-step-interval-s",
                                                      "autoscale-hysteresis",
                                                      "autoscale-tick-s",
                                                      "min-workers",
                                                      "max-workers",
                                                      "min-accuracy",
                                                      "autoscale-objective",
                                                      "autoscale-worker-price",
                                                      "autoscale-rule",
                                                      "autoscale-log"};

void summarize(std::ostream& o, const std::string& what, const sim::FleetMix& m) {
  o << what << ": " << m.arrivals << " queries, accuracy per satisfied query " << m.accuracy_per_satisfied_query
    << " (expected " << m.expected_accuracy << "), violation rate " << m.violation_rate << " (expected "
    << m.expected_violation_rate << "), dropped " << m.dropped << ", " << m.worker_seconds << " worker-seconds, cost "
    << m.cost << "\n";
}

}  // namespace

int run_simulate_fleet(const boost::program_options::variables_map& vm, const FleetSimFlags& f) {
  if (vm.count("max-violation") && !vm["max-violation"].defaulted())
    throw UsageError(
        "--max-violation: not with a fleet policy file (each class's groups are sized by its own "
        "max_violation in the file)");
  for (const auto& [name, value] : vm)
    if (!value.defaulted() && !kFleetOptions.count(name) &&
        !(f.autoscale.enabled && kFleetAutoscaleOptions.count(name)))
      throw UsageError(
          "--" + name + ": not with a fleet policy file (" + f.policies +
          " takes --load-qps or --trace, --duration-s, --trace-scale, --replay, --arrivals, --latency pNN, "
          "--seed, --out, and --autoscale with its options; docs/operators-guide.md)");
  if (vm["scheduler"].as<std::string>() != "lull")
    throw UsageError("--scheduler: a fleet policy file runs lull's scheduler only");
  if (f.latency == "sampled")
    throw UsageError(
        "--latency sampled: not with a fleet policy file (a fleet runs at each kind's compiled percentile)");
  if (vm.count("load-qps") == vm.count("trace"))
    throw UsageError("a fleet policy file takes --load-qps QPS (the fleet's load) or --trace SPEC, one of them");
  sim::TraceSpec spec;
  std::vector<ArrivalStep> process;
  sim::FleetSimSpec fleet_spec;
  try {
    if (vm.count("load-qps")) {
      check_positive_range("--load-qps", f.load_qps, limits::kMaxLoadQps);
      check_positive_range("--duration-s", f.duration_s, limits::kMaxTraceSeconds);
      spec = sim::parse_trace_spec("constant:" + number_text(f.load_qps) + ":" + number_text(f.duration_s));
    } else {
      spec = sim::parse_trace_spec(f.trace);
      spec.seed = f.seed;
      if (spec.kind == sim::TraceSpec::Kind::kArrivals)
        throw UsageError("--trace " + f.trace +
                         ": a fleet needs rates to split by class load (constant: or rate-file:, or --load-qps)");
    }
    sim::set_replay_mode(&spec, f.replay);
    sim::set_trace_scale(&spec, f.trace_scale);
    fleet_spec.process = parse_arrival_schedule(f.arrivals, "--arrivals");
    fleet_spec.segments = sim::trace_rate_segments(spec);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  fleet_spec.dispatch_end_s = sim::trace_dispatch_end_s(spec);
  fleet_spec.seed = f.seed;
  fleet_spec.autoscale = autoscale_config(f.autoscale, f.seed);
  const core::FleetTables fleet = core::load_fleet_tables(f.policies);
  for (const auto& c : fleet.classes)
    for (const auto& k : c.kinds)
      for (const auto& t : k.library)
        if (t.percentile > 0 && f.latency != "p" + number_text(t.percentile))
          throw UsageError("--latency " + f.latency + ": class '" + c.name + "' kind '" + k.kind +
                           "' is compiled at p" + number_text(t.percentile) +
                           "; recompile to simulate another percentile");
  sim::FleetSimResult r;
  try {
    r = sim::simulate_fleet(fleet, fleet_spec);
  } catch (const std::invalid_argument& e) {  // an autoscaler setting a kind's library cannot meet
    throw UsageError(e.what());
  }
  const std::string trace_text =
      vm.count("load-qps") ? "constant:" + number_text(f.load_qps) + ":" + number_text(f.duration_s) : f.trace;
  if (!f.out.empty())  // without --out, the summary alone
    write_output(f.out, sim::fleet_result_to_json(
                            r, sim::RunInfo{f.policies, trace_text, f.replay, f.arrivals, f.latency, f.seed}));
  std::ostream& summary = is_stdout(f.out) ? std::cerr : std::cout;
  std::string scale_log;
  for (const auto& c : r.classes) {
    summarize(summary, "class " + c.name, c.mix);
    for (const auto& g : c.groups) {
      summary << "  kind " << g.kind << ": " << g.workers << " workers" << (g.result.autoscale ? " at the start" : "")
              << ", weight " << g.weight << ", " << g.result.arrivals << " queries, accuracy per satisfied query "
              << g.result.accuracy_per_satisfied_query << ", violation rate " << g.result.violation_rate;
      if (g.result.autoscale) {
        summary << ", " << g.worker_seconds << " worker-seconds, " << g.result.autoscale->scale_events.size()
                << " scale events";
        for (const auto& l : g.result.autoscale->log)
          scale_log += "class " + c.name + " kind " + g.kind + ": " + l + "\n";
      }
      summary << "\n";
    }
  }
  summarize(summary, "fleet", r.fleet);
  if (!f.autoscale.log.empty()) {
    if (f.autoscale.log == "-")
      std::cerr << scale_log;
    else
      write_output(f.autoscale.log, scale_log);
  }
  return 0;
}

}  // namespace lull::cli
