// lull compile: profiles in, a verified policy set out (written atomically),
// or, for several worker counts or arrival processes, one policy library (a
// set per (count, process)); with an
// optional JSON report and a progress line for compiles over a second.
// The final line gives the whole process's wall time and its phases.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/compile_report.h"
#include "cli/compile_summary.h"
#include "cli/json_object.h"
#include "cli/output_file.h"
#include "cli/progress_line.h"
#include "cli/process_clock.h"
#include "compiler/compile_inputs.h"
#include "compiler/compile_library.h"
#include "compiler/lagged_mixture.h"
#include "compiler/transient_expectation.h"
#include "compiler/mdp/arrival_model.h"
#include "compiler/solver/solver_registry.h"
#include "schema/policy_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_compile_fleet(int argc, char** argv);

namespace {

// `--help`'s examples: each runs as written from the repository root (ctest cli.help_examples).
const char* const kCompileExamples =
    "  lull compile --profiles profiles/example-synthetic.json --slo-ms 100 --workers 4 --load-qps 20:200:20 --out "
    "/tmp/set.pb\n"
    "  # a library: one set per worker count (lull serve picks by the workers up)\n"
    "  lull compile --profiles profiles/example-synthetic.json --slo-ms 100 --workers 2:6:2 --load-qps 20:200:20 --out "
    "/tmp/library.pb\n";

// tracked:FILE: per worker count, the expectation on the file's own rates,
// the runtime switching through the compiled loads by its load estimate
// (compiler::served_mixture), printed and returned as the report's
// "on_trace" member (JSON text).
std::string tracked_expectations(const TrackedTrace& tracked, const std::vector<compiler::LibrarySweep>& sweeps,
                                 const compiler::ReducedProfiles& profiles,
                                 const std::vector<compiler::CompileSpec>& specs, const std::string& lag_mode,
                                 bool late) {
  const bool lag = lag_mode != "off", transient = lag_mode == "transient";
  const auto shares = compiler::served_load_shares(tracked.times_us);
  JsonValue obj = JsonValue::object();
  obj.add("file", tracked.path);
  obj.add("modulated", tracked.fit.modulated ? "yes" : "no");
  obj.add("mean_qps", tracked.fit.mean_qps);
  obj.add("short_range", arrival_process_text(tracked.fit.short_range.process));
  obj.add("whole_fit", arrival_process_text(tracked.fit.whole.process));
  obj.add("load_window_ms", static_cast<double>(compiler::kLoadWindowUs) / 1e3);
  obj.add("lag", transient ? "one worker's queue followed through the trace, each decision by the policy of the load "
                             "estimate at the rate its service meets (centred 100 ms window, its noise shrunk toward "
                             "5 s)"
                 : lag     ? "each policy evaluated at the rate around its queries (centred 500 ms window, its noise "
                             "shrunk away)"
                           : "none");
  JsonValue& sets = obj.add("sets", JsonValue::array());
  for (const auto& s : sweeps) {
    std::vector<compiler::LoadExpectation> grid;
    for (const auto& r : s.sweep.reports)
      grid.push_back({r.load_qps, r.expected_accuracy, r.beyond_capacity ? 1.0 : r.expected_violation_rate});
    std::sort(grid.begin(), grid.end(), [](const auto& a, const auto& b) { return a.load_qps < b.load_qps; });
    const compiler::LoadExpectation estimate_only = compiler::served_mixture(shares, grid);
    compiler::LoadExpectation m = estimate_only;
    if (lag) {
      const std::size_t i = static_cast<std::size_t>(&s - sweeps.data());
      // The rate rounded to the compiled loads' mean spacing (at least 1 QPS).
      const double step =
          grid.size() > 1 ? (grid.back().load_qps - grid.front().load_qps) / static_cast<double>(grid.size() - 1) : 1;
      const double dispersion = tracked.fit.short_range.process.burstiness();
      if (transient)
        m = compiler::transient_expectation(profiles, specs[i], s, tracked.times_us, std::max(step, 1.0), dispersion,
                                            late);
      else
        m = compiler::lagged_mixture(profiles, specs[i], s,
                                     compiler::served_load_pairs(tracked.times_us, std::max(step, 1.0), dispersion),
                                     1e-4, late);
      m.load_qps = estimate_only.load_qps;
    }
    std::fprintf(stderr,
                 "lull compile: %d workers on %s's rates (%.0f ms load estimates, mean %.1f QPS, through %zu compiled "
                 "loads): expected accuracy %.4f, violation %.4f\n",
                 s.workers, tracked.path.c_str(), static_cast<double>(compiler::kLoadWindowUs) / 1e3, m.load_qps,
                 grid.size(), m.accuracy, m.violation);
    if (shares.back().first > grid.back().load_qps)
      std::fprintf(stderr,
                   "lull compile: warning: %d workers: load estimates reach %.0f QPS, above the highest compiled load "
                   "(%g QPS), which then serves\n",
                   s.workers, shares.back().first, grid.back().load_qps);
    JsonValue& set = sets.push(JsonValue::object());
    set.add("workers", s.workers);
    set.add("mean_load_estimate_qps", m.load_qps);
    set.add("expected_accuracy", m.accuracy);
    set.add("expected_violation_rate", m.violation);
    if (lag) {
      set.add("estimate_only_accuracy", estimate_only.accuracy);
      set.add("estimate_only_violation_rate", estimate_only.violation);
    }
  }
  return "\"on_trace\": " + obj.text(1);
}

// --expect-lag on without a trace: per worker count and compiled load, the
// expectation with that load as the true, constant one and the policies the
// runtime's load estimate picks around it (compiler::served_expectations),
// printed as a table and returned as the report's "served" member.
std::string served_expectations(const std::vector<compiler::LibrarySweep>& sweeps,
                                const compiler::ReducedProfiles& profiles,
                                const std::vector<compiler::CompileSpec>& specs, bool late) {
  JsonValue obj = JsonValue::object();
  obj.add("load_window_ms", static_cast<double>(compiler::kLoadWindowUs) / 1e3);
  obj.add("noise",
          "the load estimate's count over the window at each compiled load, each policy it picks evaluated there");
  JsonValue& sets = obj.add("sets", JsonValue::array());
  std::fprintf(stderr,
               "lull compile: served through the %.0f ms load estimate (each compiled load taken as the true one):\n",
               static_cast<double>(compiler::kLoadWindowUs) / 1e3);
  for (std::size_t i = 0; i < sweeps.size(); ++i) {
    const auto served = compiler::served_expectations(profiles, specs[i], sweeps[i], compiler::kLoadWindowUs, late);
    JsonValue& set = sets.push(JsonValue::object());
    set.add("workers", sweeps[i].workers);
    JsonValue& loads = set.add("loads", JsonValue::array());
    std::fprintf(stderr, "  %7s  %9s  %13s  %14s\n", "workers", "load QPS", "exp. accuracy", "exp. violation");
    for (const auto& m : served) {
      JsonValue& l = loads.push(JsonValue::object());
      l.add("load_qps", m.load_qps);
      l.add("expected_accuracy", m.accuracy);
      l.add("expected_violation_rate", m.violation);
      std::fprintf(stderr, "  %7d  %9g  %13.4f  %14.4f\n", sweeps[i].workers, m.load_qps, m.accuracy, m.violation);
    }
  }
  return "\"served\": " + obj.text(1);
}

}  // namespace

int run_compile(int argc, char** argv) {
  if (names_flag(argc, argv, "--fleet")) return run_compile_fleet(argc, argv);
  CompileFlags flags;
  std::string out_path, report_path, expect_lag = "off", expect_late = "off";
  po::options_description desc("lull compile options");
  add_compile_options(desc, flags);
  // clang-format off
  desc.add_options()
      ("out", po::value(&out_path)->required(),
       "policy set to write (a policy library for several worker counts; binary protobuf; '-' for stdout, not a terminal)")
      ("report", po::value(&report_path), "JSON report to write ('-' for stdout)")
      ("expect-lag", po::value(&expect_lag)->default_value(expect_lag),
       "on: tracked:FILE's expectation on the trace evaluates each served policy at the rate around its queries "
       "(the load window's lag), not at the load it was compiled for; without a trace, each compiled load is also "
       "reported as served through the load estimate's noise (--report's \"served\"); transient (tracked:FILE): one "
       "worker's queue followed through the trace, so the backlog a rate jump leaves while the estimate catches up "
       "counts; off: at its compiled load")
      ("expect-late", po::value(&expect_late)->default_value(expect_late),
       "on (with --expect-lag on or transient): those expectations count, of a batch that misses, only the queries "
       "expected to be "
       "late (the earliest, and later ones whose extra slack is short), not the whole batch; off: the whole batch "
       "(mdp-spec section 6)");
  // clang-format on
  if (!parse_command_line(
          argc, argv, desc,
          "usage: lull compile --profiles P --slo-ms 150 --workers 60 --load-qps 200:4000:200 --out SET.pb\n"
          "       lull compile ... --workers 20:100:10 --load-qps auto:200:4000 --out LIBRARY.pb\n"
          "       lull compile --fleet FLEET.json --load-qps 1000,2000 --out FLEET.pb (lull compile --fleet x --help)",
          {nullptr, renamed_compile_flags(), nullptr, "", kCompileExamples}))
    return 0;
  check_binary_output(out_path, "--out");
  check_expect_flags(expect_lag, expect_late, true);
  if (expect_lag == "transient" && flags.arrivals.rfind("tracked:", 0) != 0)
    throw UsageError("--expect-lag transient: needs --arrivals tracked:FILE (it follows the queue through the trace)");
  std::optional<compiler::AdaptiveLoads> adaptive;
  std::string fit_note;
  TrackedTrace tracked;
  // In the order compile_library reports progress by, so its indices name the right count.
  const auto specs = compiler::in_library_order(compile_specs(flags, &adaptive, &fit_note, &tracked));
  if (!fit_note.empty()) std::fprintf(stderr, "lull compile: %s\n", fit_note.c_str());
  const bool library = specs.size() > 1;
  // What each process's MDP is: exact, or which approximation (docs/solver.md).
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (i == 0 || !(specs[i].mdp.arrivals == specs[i - 1].mdp.arrivals) ||
        specs[i].mdp.workers != specs[i - 1].mdp.workers)
      if (specs[i].mdp.arrivals.kind != ArrivalProcess::Kind::kPoisson ||
          (specs[i].mdp.phase_cap > 0 && specs[i].mdp.workers > specs[i].mdp.phase_cap))
        std::fprintf(stderr, "lull compile: %d workers, %s\n", specs[i].mdp.workers,
                     compiler::arrival_model(specs[i].mdp.arrivals, specs[i].mdp.workers, 1, specs[i].mdp.phase_cap)
                         .description.c_str());
  auto solver = compiler::make_solver(specs.front().device, &std::cerr);

  CompileSeconds sec;
  sec.setup = seconds_since_process_start();
  auto inputs = compiler::load_compile_inputs(specs.front());
  sec.inputs = inputs.seconds;
  const auto t0 = std::chrono::steady_clock::now();
  ProgressLine progress(std::cerr);
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  bool progress_shown = false;
  // High expected violation: one summary line after the sweep, not one per load.
  int loads = 0, high = 0, beyond = 0;
  bool any_high = false;
  int worst_workers = 0;
  compiler::LoadReport worst_copy;
  const auto sweeps = compiler::compile_library(
      inputs.profiles, specs, adaptive ? &*adaptive : nullptr, *solver,
      [&](int set, int sets, int done, int total, const compiler::LoadReport& r) {
        const int workers = specs[static_cast<std::size_t>(set)].mdp.workers;
        const std::string arrivals = arrival_process_text(specs[static_cast<std::size_t>(set)].mdp.arrivals);
        ++loads;
        if (r.beyond_capacity || r.expected_violation_rate > 0.05) {
          ++high;
          beyond += r.beyond_capacity ? 1 : 0;
          if (!any_high || r.expected_violation_rate > worst_copy.expected_violation_rate) {
            worst_copy = r;
            any_high = true;
            worst_workers = workers;
          }
        }
        if (elapsed() > 1.0 || progress_shown) {
          progress_shown = true;
          char line[200];
          char where[96] = "";
          if (library)
            std::snprintf(where, sizeof where, "workers %d, %s (%d/%d), ", workers, arrivals.c_str(), set + 1, sets);
          std::snprintf(line, sizeof line,
                        "lull compile: %s%d/%d loads, %.1f s; %g QPS -> accuracy %.4f, violation %.4f", where, done,
                        total, elapsed(), r.load_qps, r.expected_accuracy, r.expected_violation_rate);
          // Each load on a terminal; in a log, a line per finished set only.
          if (done == total)
            progress.step(line);
          else
            progress.update(line);
        }
      });
  sec.solve = elapsed();
  progress.finish();
  if (high > 0)
    std::fprintf(stderr,
                 "lull compile: warning: the expected violation rate is above 0.05 at %d of %d loads (worst %.3f at %d "
                 "workers, %g QPS)%s; --report lists every load\n",
                 high, loads, worst_copy.expected_violation_rate, worst_workers, worst_copy.load_qps,
                 beyond > 0 ? (", " + std::to_string(beyond) +
                               " of them beyond what the workers can serve with the fastest model")
                                  .c_str()
                            : "");
  if (adaptive)
    for (const auto& s : sweeps)
      std::fprintf(stderr,
                   "lull compile: adaptive load grid for %d workers: %zu loads in %d rounds "
                   "(adjacent expected accuracies within %g point)\n",
                   s.workers, s.sweep.reports.size(), s.rounds, adaptive->max_accuracy_gap * 100);
  const auto tw = std::chrono::steady_clock::now();
  int policies = 0;
  for (const auto& s : sweeps) policies += s.sweep.set.policies_size();
  if (library)
    write_binary_output(out_path, policy_library_bytes(compiler::policy_library_of(sweeps)), "--out");
  else
    write_binary_output(out_path, policy_set_bytes(sweeps.front().sweep.set), "--out");
  sec.write = std::chrono::duration<double>(std::chrono::steady_clock::now() - tw).count();
  sec.total = seconds_since_process_start();
  const std::string on_trace = tracked.path.empty() ? ""
                                                    : tracked_expectations(tracked, sweeps, inputs.profiles, specs,
                                                                           expect_lag, expect_late == "on");
  const std::string served = expect_lag == "on" && tracked.path.empty()
                                 ? served_expectations(sweeps, inputs.profiles, specs, expect_late == "on")
                                 : "";
  if (!report_path.empty()) {
    std::string json = library ? library_report_json(sweeps, adaptive.has_value(), solver->name(), sec)
                               : compile_report_json(sweeps.front(), adaptive.has_value(), solver->name(), sec);
    if (!on_trace.empty()) json = json.substr(0, json.rfind('}')) + ", " + on_trace + "}\n";
    if (!served.empty()) json = json.substr(0, json.rfind('}')) + ", " + served + "}\n";
    write_output(report_path, json);
  }
  // The table goes to stdout unless a binary or JSON output already has it.
  const bool stdout_taken = out_path == "-" || report_path == "-";
  std::fputs(compile_summary_table(sweeps).c_str(), stdout_taken ? stderr : stdout);
  std::fflush(stdout);
  std::fprintf(stderr,
               "lull compile: wrote %d policies%s to %s in %.2f s (read %.2f, validate %.2f, reduce %.2f, solve %.2f; "
               "%s solver)\n",
               policies, library ? (" in " + std::to_string(sweeps.size()) + " sets").c_str() : "", out_path.c_str(),
               seconds_since_process_start(), sec.inputs.read, sec.inputs.validate, sec.inputs.reduce, sec.solve,
               solver->name().c_str());
  return 0;
}

}  // namespace lull::cli
