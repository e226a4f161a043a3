// lull simulate: runs a policy set (or a baseline) in the discrete-event
// simulator and writes a JSON result (and optionally a per-second timeline).
#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "cli/output_file.h"
#include "cli/parse_options.h"
#include "runtime/policy_loader.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/raw_profiles.h"
#include "runtime/sim/result_json.h"
#include "runtime/sim/simulator.h"
#include "runtime/sim/trace_spec.h"
#include "schema/input_limits.h"

namespace lull::cli {
namespace po = boost::program_options;

namespace {

std::vector<std::string> model_names(const runtime::PolicyTable& t) {
  std::vector<std::string> names;
  for (const auto& m : t.models) names.push_back(m.name);
  return names;
}

// "p95" (the compiled percentile, deterministic) or "sampled".
bool parse_latency_mode(const std::string& text, const runtime::PolicyTable& table) {
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
                       std::to_string(static_cast<int>(table.percentile)) + "; recompile to simulate another percentile");
    return false;
  }
  throw UsageError("--latency '" + text + "': expected pNN (the compiled percentile) or sampled");
}

}  // namespace

int run_simulate(int argc, char** argv) {
  std::string policies, trace, replay = "hold", arrivals = "poisson", scheduler = "lull", latency = "p95", profiles, out,
      timeline;
  int workers = 0;
  std::uint64_t seed = 1;
  double window_ms = 500, ms_profile_s = 300;
  po::options_description opts("lull simulate options");
  opts.add_options()
      ("policies", po::value(&policies), "policy set file (from lull compile)")
      ("workers", po::value(&workers), "number of workers; must match the policy set")
      ("trace", po::value(&trace), "constant:QPS:SECONDS | rate-file:PATH (lines '<second> <QPS>') | arrivals:PATH (one time in s per line)")
      ("replay", po::value(&replay)->default_value(replay),
       "hold: run the trace as written and serve every query | reference: the reference simulator's replay "
       "(rate file: per-second rates, 300 s, wrap-around; queries still queued at the end are not counted)")
      ("arrivals", po::value(&arrivals)->default_value(arrivals), "arrival process for constant/rate traces: poisson | gamma:CV2")
      ("scheduler", po::value(&scheduler)->default_value(scheduler), "lull | jellyfish | modelswitching")
      ("latency", po::value(&latency)->default_value(latency), "pNN: deterministic at the compiled percentile | sampled: drawn from --profiles")
      ("profiles", po::value(&profiles), "raw samples for --latency sampled: lull profile JSON or a RAMSIS-artifact folder")
      ("seed", po::value(&seed)->default_value(seed), "random seed (arrivals, sampled latencies, baseline profiling)")
      ("load-window-ms", po::value(&window_ms)->default_value(window_ms), "load monitor's sliding window")
      ("ms-profile-s", po::value(&ms_profile_s)->default_value(ms_profile_s), "length of each ModelSwitching offline run")
      ("out", po::value(&out), "result JSON file ('-' for stdout)")
      ("timeline", po::value(&timeline), "optional per-second CSV ('-' for stdout)");
  po::variables_map vm;
  ParseExtras extras;
  extras.vm = &vm;
  if (!parse_command_line(argc, argv, opts,
                          "usage: lull simulate --policies SET.pb --workers K --trace SPEC --out RESULT.json [options]", extras))
    return 0;
  for (const char* required : {"policies", "workers", "trace", "out"})
    if (!vm.count(required)) throw UsageError(std::string("--") + required + " is required (lull simulate --help)");
  check_range("--workers", workers, 1, limits::kMaxWorkers);
  check_positive_range("--load-window-ms", window_ms, limits::kMaxIntervalMs);
  check_positive_range("--ms-profile-s", ms_profile_s, limits::kMaxTraceSeconds);

  sim::SimOptions options;
  sim::TraceSpec spec;
  sim::ArrivalProcess process;
  try {
    options.scheduler = sim::parse_scheduler_kind(scheduler);
    spec = sim::parse_trace_spec(trace);
    sim::set_replay_mode(&spec, replay);
    process = sim::parse_arrival_process(arrivals);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const runtime::PolicyTable table = runtime::load_policy_table(policies, runtime::PolicyExpectations{"", workers, 0});
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
    raw = sim::load_raw_profiles(profiles, model_names(table));
    lat_model = std::make_unique<sim::SampledLatency>(table, raw, seed ^ 0x5eed5eedULL);
  } else {
    lat_model = std::make_unique<sim::CompiledLatency>(table);
  }
  const auto source = sim::make_arrival_source(spec, process, seed);
  const sim::SimResult r = sim::simulate(table, *source, *lat_model, options);

  write_output(out, sim::result_to_json(r, table, sim::RunInfo{policies, trace, replay, arrivals, latency, seed}));
  if (!timeline.empty()) write_output(timeline, sim::timeline_to_csv(r));
  // The summary goes where the outputs do not.
  std::ostream& summary = is_stdout(out) || is_stdout(timeline) ? std::cerr : std::cout;
  summary << r.scheduler << ": " << r.arrivals << " queries, accuracy per satisfied query "
            << r.accuracy_per_satisfied_query << ", violation rate " << r.violation_rate << ", dropped " << r.dropped;
  if (options.dispatch_end_s > 0) summary << ", not dispatched at end " << r.not_dispatched_at_end;
  summary << ", " << r.wall_s + r.plan_wall_s << " s\n";
  return 0;
}

}  // namespace lull::cli
