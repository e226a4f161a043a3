// lull plan: the capacity planner. Reads profiles like compile, then asks the
// compiler's planner (compiler/plan) for the fewest workers meeting a target
// at a load or over a rate trace; prints the plan, and writes it as JSON
// (--out) and as a PNG (--plot). Outputs are written only once the whole plan
// is made, so a refused input leaves no file behind.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/json_object.h"
#include "cli/number_lists.h"
#include "cli/output_file.h"
#include "cli/plan_output.h"
#include "cli/plan_plot.h"
#include "cli/process_clock.h"
#include "cli/progress_line.h"
#include "compiler/compile_inputs.h"
#include "compiler/plan/capacity_plan.h"
#include "compiler/plan/tracked_plan.h"
#include "compiler/solver/solver_registry.h"
#include "schema/input_limits.h"

namespace po = boost::program_options;

namespace lull::cli {
namespace {

// `--help`'s examples: each runs as written from the repository root (ctest cli.help_examples).
const char* const kPlanExamples =
    "  lull plan --profiles profiles/example-synthetic.json --slo-ms 100 --max-violation 0.01 --load-qps 1000 --out "
    "/tmp/plan.json\n";

// The PATH of rate-file:PATH (the one trace kind a plan reads).
std::string rate_file_path(const std::string& trace) {
  const std::string kind = "rate-file:";
  if (trace.rfind(kind, 0) != 0 || trace.size() == kind.size())
    throw UsageError("--trace: expected rate-file:PATH (lines '<second> <QPS>'), got '" + trace + "'");
  return trace.substr(kind.size());
}

// --arrivals tracked:FILE: the fewest workers whose library over loads
// meets the target on the file's rates scaled to --load-qps
// (compiler/plan/tracked_plan.h).
int plan_on_tracked(compiler::PlanRequest& req, const CompileFlags& flags, const TrackedTrace& tracked,
                    const std::string& out_path, const std::string& lag_mode, bool late) {
  const bool expect_lag = lag_mode != "off";
  if (!(req.load_qps > 0)) req.load_qps = tracked.fit.mean_qps;
  if (!(req.target.max_violation > 0 && req.target.max_violation < 1))
    throw UsageError("--max-violation: must be in (0, 1)");
  auto solver = compiler::make_solver(req.spec.device, &std::cerr);
  compiler::CompileSpec input_spec = req.spec;
  input_spec.mdp.workers = 1;
  input_spec.loads_qps = {1};
  const auto inputs = compiler::load_compile_inputs(input_spec);
  compiler::ExpectationCache cache(inputs.profiles, req.spec, *solver);
  compiler::TrackedPlan plan;
  const compiler::TrackedLag lag{solver.get(), tracked.fit.short_range.process.burstiness(), lag_mode == "transient",
                                 late};
  try {
    plan = compiler::plan_tracked(cache, tracked.times_us, tracked.fit.mean_qps, req.load_qps, req.target,
                                  req.max_workers, expect_lag ? &lag : nullptr);
  } catch (const compiler::PlanError& e) {
    throw UsageError(std::string("--arrivals ") + flags.arrivals + ": " + e.what());
  }
  char text[900];
  std::snprintf(text, sizeof text,
                "lull plan: %s rates scaled to %g QPS, %s within each load: %d workers (library over loads %g QPS "
                "apart)\n  expected on the trace: accuracy %.4f, violation %.4f (%d workers: %.4f)\n"
                "  the count is set by the rates: %d workers meet the target up to %g QPS, the %.1f%% quantile of "
                "the %.0f ms load estimates (mean estimate %.1f QPS)\n",
                tracked.path.c_str(), req.load_qps, arrival_process_text(req.spec.mdp.arrivals).c_str(), plan.workers,
                plan.grid_step_qps, plan.expected.accuracy, plan.expected.violation, plan.workers - 1,
                plan.one_fewer.violation, plan.workers, plan.capacity_qps, plan.capacity_quantile * 100,
                static_cast<double>(compiler::kLoadWindowUs) / 1e3, plan.expected.load_qps);
  std::string lag_text;
  if (expect_lag) {
    char more[300];
    std::snprintf(more, sizeof more,
                  "  counts judged with the load window's lag (--expect-lag %s): without it %d workers would expect "
                  "violation %.4f\n",
                  lag_mode.c_str(), plan.workers, plan.estimate_only.violation);
    lag_text = more;
  }
  if (!out_path.empty()) {
    JsonValue root = JsonValue::object();
    root.add("arrivals", flags.arrivals);
    root.add("short_range", arrival_process_text(req.spec.mdp.arrivals));
    root.add("load_qps", req.load_qps);
    root.add("max_violation", req.target.max_violation);
    root.add("workers", plan.workers);
    root.add("expected_accuracy", plan.expected.accuracy);
    root.add("expected_violation_rate", plan.expected.violation);
    root.add("grid_step_qps", plan.grid_step_qps);
    root.add("capacity_qps", plan.capacity_qps);
    root.add("capacity_quantile", plan.capacity_quantile);
    root.add("expect_lag", lag_mode);
    if (late) root.add("expect_late", "on");
    if (expect_lag) {
      root.add("estimate_only_accuracy", plan.estimate_only.accuracy);
      root.add("estimate_only_violation_rate", plan.estimate_only.violation);
    }
    JsonValue& tried = root.add("tried", JsonValue::array());
    for (const auto& [k, m] : plan.tried) {
      JsonValue& row = tried.push(JsonValue::object());
      row.add("workers", k);
      row.add("expected_accuracy", m.accuracy);
      row.add("expected_violation_rate", m.violation);
    }
    write_output(out_path, root.text() + "\n");
  }
  std::fputs((text + lag_text).c_str(), is_stdout(out_path) ? stderr : stdout);
  return 0;
}

}  // namespace

int run_plan_fleet(int argc, char** argv);

int run_plan(int argc, char** argv) {
  if (names_flag(argc, argv, "--fleet")) return run_plan_fleet(argc, argv);
  CompileFlags flags;
  compiler::PlanRequest req;
  std::string trace, capacity_workers, out_path, plot_path, expect_lag = "off", expect_late = "off";
  po::options_description desc("lull plan options");
  add_model_options(desc, flags);
  // clang-format off
  desc.add_options()
      ("max-violation", po::value(&req.target.max_violation)->required(), "target expected violation rate, in (0, 1)")
      ("min-accuracy", po::value(&req.target.min_accuracy)->default_value(0), "minimum expected accuracy, in (0, 1) (0: none)")
      ("load-qps", po::value(&req.load_qps), "plan for this central load (QPS)")
      ("trace", po::value(&trace), "plan over a rate trace: rate-file:PATH (lines '<second> <QPS>') | arrivals:PATH (arrival times: "
       "--arrivals tracked:PATH at its mean load unless --load-qps)")
      ("window-s", po::value(&req.window_s)->default_value(60), "trace: workers change every this many seconds")
      ("lead-s", po::value(&req.lead_s)->default_value(0), "trace: a window's count must also hold this long past its end")
      ("worker-memory-mb", po::value(&req.worker_memory_mb)->default_value(0),
       "memory per worker (MiB): load the best subset of models that fits (profiles need memory_mb)")
      ("max-workers", po::value(&req.max_workers)->default_value(-1, "1000; with a phase cap 100000"),
       "the search's largest worker count")
      ("arrivals", po::value(&flags.arrivals)->default_value(flags.arrivals),
       "central arrival process the plan's expectations hold for: poisson | gamma:CV2 | batch:D | fit:FILE | tracked:FILE (the file's rates, scaled to --load-qps; docs/user-guide.md)")
      ("expect-lag", po::value(&expect_lag)->default_value(expect_lag),
       "with --arrivals tracked:FILE: on judges each count by its policies evaluated at the rate around the queries "
       "they serve (the load window's lag; compiles a library per count tried) | transient: by one worker's queue "
       "followed through the trace (lull compile --help) | off: by their compiled expectations")
      ("expect-late", po::value(&expect_late)->default_value(expect_late),
       "on (with --expect-lag on or transient): a batch that misses counts only its late queries (lull compile --help)")
      ("shard-qps-limit", po::value(&req.shard_qps_limit)->default_value(req.shard_qps_limit),
       "one lull process's throughput (QPS; default: measured, docs/benchmarks.md): a load above it is planned as "
       "ceil(load / limit) shards behind a balancer (docs/operators-guide.md)")
      ("capacity-workers", po::value(&capacity_workers), "worker counts of the capacity table (default: around the plan)")
      ("out", po::value(&out_path), "plan JSON to write ('-' for stdout)")
      ("plot", po::value(&plot_path), "plan PNG to write (python3 with matplotlib)");
  // clang-format on
  if (!parse_command_line(
          argc, argv, desc,
          "usage: lull plan --profiles P --slo-ms 150 --max-violation 0.01 --load-qps 3000 [--out PLAN.json]\n"
          "       lull plan ... --trace rate-file:TRACE --window-s 60 --lead-s 30 [--plot PLAN.png]\n"
          "       lull plan --fleet FLEET.json --load-qps 3000 (lull plan --fleet x --help)",
          {nullptr, renamed_compile_flags(), nullptr, "", kPlanExamples}))
    return 0;
  if (is_stdout(plot_path)) throw UsageError("--plot: a PNG does not go to stdout; name a file");
  check_expect_flags(expect_lag, expect_late, true);
  req.spec = model_spec(flags);
  if (flags.arrivals.rfind("tracked:", 0) == 0 && !trace.empty())
    throw UsageError("--trace: not with --arrivals tracked:FILE (the file's own rates are planned for)");
  // --trace arrivals:FILE (timestamps): the file's own rates, as --arrivals tracked:FILE at its mean load.
  if (trace.rfind("arrivals:", 0) == 0) {
    if (flags.arrivals != "poisson")
      throw UsageError("--trace arrivals:FILE: its short-range pattern is fitted from the file; drop --arrivals");
    if (trace.size() == 9) throw UsageError("--trace arrivals:FILE: no file named");
    flags.arrivals = "tracked:" + trace.substr(9);
    trace.clear();
  }
  if (expect_lag != "off" && flags.arrivals.rfind("tracked:", 0) != 0)
    throw UsageError("--expect-lag " + expect_lag + ": needs --arrivals tracked:FILE");
  if (flags.phase_cap == -1) req.spec.mdp.phase_cap = compiler::kPlanPhaseCap;
  // Exact compiles grow as K^1.8 (docs/benchmarks.md): without a cap the search stops at 1000.
  if (req.max_workers == -1) req.max_workers = req.spec.mdp.phase_cap > 0 ? limits::kMaxWorkers : 1000;
  std::string fit_note;
  TrackedTrace tracked;
  const auto processes = compile_arrivals(flags.arrivals, &fit_note, &tracked, flags.fit_scale);
  if (processes.size() != 1) throw UsageError("--arrivals: lull plan takes one process, got '" + flags.arrivals + "'");
  req.spec.mdp.arrivals = processes.front();
  if (!fit_note.empty()) std::fprintf(stderr, "lull plan: %s\n", fit_note.c_str());
  if (processes.front().kind != ArrivalProcess::Kind::kPoisson)
    std::fprintf(stderr,
                 "lull plan: planning for %s arrivals (every worker count's MDP models them; docs/user-guide.md)\n",
                 arrival_process_text(processes.front()).c_str());
  if (!tracked.path.empty()) return plan_on_tracked(req, flags, tracked, out_path, expect_lag, expect_late == "on");
  if (!trace.empty()) req.trace_path = rate_file_path(trace);
  for (double k :
       capacity_workers.empty() ? std::vector<double>{} : parse_number_list(capacity_workers, "--capacity-workers")) {
    if (k != static_cast<int>(k)) throw UsageError("--capacity-workers: whole numbers expected");
    req.capacity_workers.push_back(static_cast<int>(k));
  }
  try {
    compiler::validate_plan_request(req);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  auto solver = compiler::make_solver(req.spec.device, &std::cerr);
  compiler::CompileSpec input_spec = req.spec;
  input_spec.mdp.workers = 1;
  input_spec.loads_qps = {1};
  const auto inputs = compiler::load_compile_inputs(input_spec);
  ProgressLine progress(std::cerr);
  const auto result =
      compiler::run_plan(req, inputs.profiles, *solver, [&](const std::string& stage, std::size_t solves) {
        char line[160];
        std::snprintf(line, sizeof line, "lull plan: %s, %zu policies compiled, %.1f s", stage.c_str(), solves,
                      seconds_since_process_start());
        progress.step(line);
      });
  progress.finish();
  const PlanContext ctx{inputs.profiles.task, flags.slo_ms, seconds_since_process_start()};
  const std::string json = plan_json(req, result, ctx);
  if (!plot_path.empty()) write_plan_plot(json, plot_path);
  if (!out_path.empty()) write_output(out_path, json);
  std::string table = plan_table(req, result, ctx);
  if (is_stdout(out_path))
    std::fputs(table.c_str(), stderr);
  else
    std::fputs(table.c_str(), stdout);
  return 0;
}

}  // namespace lull::cli
