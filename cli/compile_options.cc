#include "cli/compile_options.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "cli/commands.h"
#include "cli/number_lists.h"
#include "compiler/arrival_fit.h"
#include "compiler/profile/reduced_artifact_cache.h"
#include "schema/input_limits.h"
#include "schema/rate_file.h"

namespace po = boost::program_options;

namespace lull::cli {

std::vector<RenamedFlag> renamed_compile_flags() {
  return {{"--accuracy",
           "--accuracy is now --accuracy-percent FILE (the artifact's table in percent); "
           "--accuracy in lull profile/loadgen is a table of fractions"}};
}

void add_compile_options(po::options_description& desc, CompileFlags& f) {
  add_model_options(desc, f);
  // clang-format off
  desc.add_options()
      ("workers", po::value(&f.workers)->required(), "worker count K, or a list / range (60,70,80 | 20:100:10): compile writes a policy library")
      ("load-qps", po::value(&f.loads)->required(),
       "central load(s) in QPS: 2000 | 2000,2200 | 200:4000:200 | auto:LO:HI (adaptive grid, compile only)")
      ("arrivals", po::value(&f.arrivals)->default_value(f.arrivals),
       "central arrival process: poisson | gamma:CV2 | batch:D | fit:FILE (arrival times in s, one a line) | "
       "tracked:FILE (the file's short-range pattern, its rate swings left to the load tracking: give a load grid); "
       "a list gamma:1,2,4,8 writes a set per (workers, process)");
  // clang-format on
}

void add_model_options(po::options_description& desc, CompileFlags& f) {
  auto& s = f.spec;
  // clang-format off
  desc.add_options()
      ("profiles", po::value(&s.inputs.path)->required(), "profile set: lull JSON file, or a RAMSIS artifact folder")
      ("accuracy-percent", po::value(&s.inputs.accuracy_json), "the artifact's accuracy table, in percent, for an artifact folder")
      ("task", po::value(&s.inputs.task), "task name (overrides the profile's)")
      ("profile-cache", po::value(&f.profile_cache)->default_value(f.profile_cache),
       "on: keep an artifact folder's reduced latencies in $XDG_CACHE_HOME/lull (or ~/.cache/lull) and reuse them "
       "while its files are unchanged | off: read every file")
      ("slo-ms", po::value(&f.slo_ms)->required(), "latency SLO in milliseconds")
      ("fit-scale", po::value(&f.fit_scale)->default_value(f.fit_scale),
       "--arrivals fit:FILE's time scales: trace (50-arrival windows over the whole file) | runtime (the runtime's "
       "online estimate replayed over the file: 8000-arrival windows, 20-arrival bins; the pattern it would serve)");
  // clang-format on
  add_solve_options(desc, f);
}

void check_expect_flags(const std::string& lag, const std::string& late, bool transient) {
  if (lag != "on" && lag != "off" && !(transient && lag == "transient"))
    throw UsageError("--expect-lag: " + std::string(transient ? "on, transient" : "on") + " or off, not '" + lag + "'");
  if (late != "on" && late != "off") throw UsageError("--expect-late: on or off, not '" + late + "'");
  if (late == "on" && lag == "off")
    throw UsageError("--expect-late on: needs --expect-lag on" + std::string(transient ? " or transient" : ""));
}

void add_solve_options(po::options_description& desc, CompileFlags& f) {
  auto& s = f.spec;
  // clang-format off
  desc.add_options()
      ("intervals", po::value(&s.mdp.intervals)->default_value(100), "FLD slack intervals D")
      ("md", po::bool_switch(&f.md), "model-based slack discretization instead of FLD")
      ("batching", po::value(&f.batching)->default_value("max"), "max | variable")
      ("max-queue", po::value(&s.mdp.max_queue)->default_value(32), "largest queue length tracked exactly (N)")
      ("percentile", po::value(&s.reduction.percentile)->default_value(95), "latency percentile taken from samples")
      ("models", po::value(&f.models), "comma-separated models to use (default: the Pareto front)")
      ("all-models", po::bool_switch(&s.reduction.keep_all_models), "keep every model (no Pareto pruning)")
      ("horizon", po::value(&s.solve.horizon)->default_value(100), "value-iteration horizon")
      ("phase-cap", po::value(&f.phase_cap)->default_value(-1, "0; plan: 240"),
       "0: exact MDP at every worker count | K*: a count above K* is modelled with K* phases at its load per worker "
       "(cost stops growing with the fleet; docs/user-guide.md, large fleets)")
      ("device", po::value(&s.device)->default_value("auto"), "solver: cpu | cuda | auto");
  // clang-format on
}

namespace {

void validate_or_usage(const compiler::CompileSpec& spec) {
  try {
    compiler::validate_compile_spec(spec);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

compiler::CompileSpec checked_solve_spec(compiler::CompileSpec spec, const CompileFlags& f) {
  spec.mdp.discretization = f.md ? compiler::Discretization::kMd : compiler::Discretization::kFld;
  if (f.batching != "max" && f.batching != "variable")
    throw UsageError("--batching: expected 'max' or 'variable', got '" + f.batching + "'");
  spec.mdp.batching = f.batching == "max" ? compiler::Batching::kMaximal : compiler::Batching::kVariable;
  spec.reduction.models = split_commas(f.models);
  spec.mdp.phase_cap = f.phase_cap == -1 ? 0 : f.phase_cap;
  if (f.profile_cache != "on" && f.profile_cache != "off")
    throw UsageError("--profile-cache: expected 'on' or 'off', got '" + f.profile_cache + "'");
  spec.profile_cache_dir = f.profile_cache == "on" ? compiler::default_profile_cache_dir() : "";
  // Placeholders for the two settings the caller chooses, so the rest is checked now.
  compiler::CompileSpec probe = spec;
  probe.mdp.workers = 1;
  probe.loads_qps = {1};
  validate_or_usage(probe);
  return spec;
}

}  // namespace

compiler::CompileSpec model_spec(const CompileFlags& f) {
  compiler::CompileSpec spec = f.spec;
  spec.mdp.slo_us = f.slo_ms * 1000;
  return checked_solve_spec(spec, f);
}

compiler::CompileSpec solve_spec(const CompileFlags& f) {
  compiler::CompileSpec spec = f.spec;
  // Placeholders for what a fleet description gives per kind and class.
  spec.inputs.path = "(fleet)";
  spec.mdp.slo_us = 1000;
  spec = checked_solve_spec(spec, f);
  spec.inputs.path.clear();
  spec.mdp.slo_us = 0;
  return spec;
}

std::vector<ArrivalProcess> compile_arrivals(const std::string& text, std::string* fit_note, TrackedTrace* tracked,
                                             const std::string& fit_scale_text) {
  compiler::FitScale fit_scale = compiler::FitScale::kTrace;
  try {
    fit_scale = compiler::parse_fit_scale(fit_scale_text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (fit_scale == compiler::FitScale::kRuntime && text.rfind("fit:", 0) != 0)
    throw UsageError(
        "--fit-scale runtime: for --arrivals fit:FILE only (tracked:FILE fits its short range on the "
        "rate-normalised arrivals)");
  if (text.rfind("tracked:", 0) == 0) {
    const std::string path = text.substr(8);
    if (path.empty()) throw UsageError("--arrivals tracked:FILE: no file named");
    try {
      TrackedTrace trace{path, read_arrivals_file(path), {}};
      trace.fit = compiler::fit_tracked_arrivals(trace.times_us);
      if (fit_note) {
        *fit_note =
            "--arrivals " + text + ": " + std::to_string(trace.fit.whole.arrivals) + " arrivals, " + trace.fit.reason;
        if (!trace.fit.warning.empty()) *fit_note += "\nwarning: --arrivals " + text + ": " + trace.fit.warning;
      }
      const ArrivalProcess process = trace.fit.short_range.process;
      if (tracked) *tracked = std::move(trace);
      return {process};
    } catch (const std::invalid_argument& e) {
      const std::string why = e.what();
      throw UsageError("--arrivals tracked:" + (why.rfind(path, 0) == 0 ? why : path + ": " + why));
    }
  }
  if (text.rfind("fit:", 0) == 0) {
    const std::string path = text.substr(4);
    if (path.empty()) throw UsageError("--arrivals fit:FILE: no file named");
    try {
      const compiler::ArrivalFit fit = compiler::fit_arrival_process(read_arrivals_file(path), fit_scale);
      if (fit_note)
        *fit_note = "--arrivals " + text + ": " + std::to_string(fit.arrivals) + " arrivals -> " + fit.reason;
      return {fit.process};
    } catch (const std::invalid_argument& e) {
      const std::string why = e.what();
      // read_arrivals_file names the file already; the fit does not.
      throw UsageError("--arrivals fit:" + (why.rfind(path, 0) == 0 ? why : path + ": " + why));
    }
  }
  try {
    auto processes = parse_arrival_processes(text, "--arrivals");
    for (const auto& p : processes)
      if (p.kind == ArrivalProcess::Kind::kUniform) throw UsageError("--arrivals uniform: no MDP models it");
    return processes;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::vector<compiler::CompileSpec> compile_specs(const CompileFlags& f,
                                                 std::optional<compiler::AdaptiveLoads>* adaptive,
                                                 std::string* fit_note, TrackedTrace* tracked) {
  compiler::CompileSpec spec = model_spec(f);
  const std::vector<ArrivalProcess> processes = compile_arrivals(f.arrivals, fit_note, tracked, f.fit_scale);
  if (f.loads.rfind("auto:", 0) == 0) {
    if (!adaptive) throw UsageError("--load-qps auto:LO:HI is for lull compile only");
    std::string ends_text = f.loads.substr(5);
    const bool two =
        std::count(ends_text.begin(), ends_text.end(), ':') == 1 && ends_text.find(',') == std::string::npos;
    std::replace(ends_text.begin(), ends_text.end(), ':', ',');
    const auto ends = two ? parse_number_list(ends_text, "--load-qps auto:LO:HI") : std::vector<double>{};
    if (ends.size() != 2)
      throw UsageError("--load-qps: expected auto:LO:HI, e.g. auto:200:4000 (got '" + f.loads + "')");
    compiler::AdaptiveLoads grid;
    grid.lo_qps = ends[0];
    grid.hi_qps = ends[1];
    try {
      compiler::validate_adaptive_loads(grid);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    *adaptive = grid;
    spec.loads_qps = {grid.lo_qps, grid.hi_qps};
  } else {
    spec.loads_qps = parse_number_list(f.loads, "--load-qps");
  }
  std::vector<compiler::CompileSpec> out;
  for (double k : parse_number_list(f.workers, "--workers")) {
    if (!(k >= 1 && k <= limits::kMaxWorkers) || k != std::floor(k))
      throw UsageError("--workers: must be a whole number in 1.." + std::to_string(limits::kMaxWorkers) + " (got " +
                       std::to_string(k) + ")");
    spec.mdp.workers = static_cast<int>(k);
    for (const auto& process : processes) {
      spec.mdp.arrivals = process;
      validate_or_usage(spec);
      out.push_back(spec);
    }
  }
  return out;
}

}  // namespace lull::cli
