// lull compile: profiles in, a verified policy set out (written atomically),
// with an optional JSON report and a progress line for sweeps over a second.
// The final line gives the whole process's wall time and its phases.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/compile_report.h"
#include "cli/output_file.h"
#include "cli/progress_line.h"
#include "cli/process_clock.h"
#include "compiler/compile_inputs.h"
#include "compiler/solver/solver_registry.h"
#include "schema/policy_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_compile(int argc, char** argv) {
  CompileFlags flags;
  std::string out_path, report_path;
  po::options_description desc("lull compile options");
  add_compile_options(desc, flags);
  desc.add_options()
      ("out", po::value(&out_path)->required(), "policy set to write (binary protobuf; '-' for stdout, not a terminal)")
      ("report", po::value(&report_path), "JSON report to write ('-' for stdout)");
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull compile --profiles P --slo-ms 150 --workers 60 --load-qps 200:4000:200 --out SET.pb",
                          {nullptr, renamed_compile_flags(), nullptr}))
    return 0;
  check_binary_output(out_path, "--out");
  const auto specs = compile_specs(flags);
  if (specs.size() != 1) throw UsageError("--workers: compile takes one worker count (a policy set is per worker count)");
  const compiler::CompileSpec& spec = specs.front();
  auto solver = compiler::make_solver(spec.device, &std::cerr);

  CompileSeconds sec;
  sec.setup = seconds_since_process_start();
  auto inputs = compiler::load_compile_inputs(spec);
  sec.inputs = inputs.seconds;
  const compiler::SweepRequest req{std::move(inputs.profiles), spec};
  const auto t0 = std::chrono::steady_clock::now();
  ProgressLine progress(std::cerr);
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  bool progress_shown = false;
  const auto result = compiler::run_sweep(req, *solver, [&](int done, int total, const compiler::LoadReport& r) {
    if (r.beyond_capacity || r.expected_violation_rate > 0.05) {
      char warning[200];
      std::snprintf(warning, sizeof warning, "lull compile: warning: at %g QPS the expected violation rate is high (%.3f)%s",
                    r.load_qps, r.expected_violation_rate,
                    r.beyond_capacity ? ": the load is beyond what the workers can serve with the fastest model" : "");
      progress.line(warning);
    }
    if (elapsed() > 1.0 || progress_shown) {
      progress_shown = true;
      char line[160];
      std::snprintf(line, sizeof line, "lull compile: %d/%d loads, %.1f s; %g QPS -> accuracy %.4f, violation %.4f", done,
                    total, elapsed(), r.load_qps, r.expected_accuracy, r.expected_violation_rate);
      if (done == total)
        progress.line(line);
      else
        progress.step(line);
    }
  });
  sec.solve = elapsed();
  const auto tw = std::chrono::steady_clock::now();
  write_binary_output(out_path, policy_set_bytes(result.set), "--out");
  sec.write = std::chrono::duration<double>(std::chrono::steady_clock::now() - tw).count();
  sec.total = seconds_since_process_start();
  const std::string report = compile_report_json(result, solver->name(), sec);
  if (!report_path.empty()) write_output(report_path, report);
  std::fprintf(stderr, "lull compile: wrote %d policies to %s in %.2f s (read %.2f, validate %.2f, reduce %.2f, solve %.2f; %s solver)\n",
               result.set.policies_size(), out_path.c_str(), seconds_since_process_start(), sec.inputs.read,
               sec.inputs.validate, sec.inputs.reduce, sec.solve, solver->name().c_str());
  return 0;
}

}  // namespace lull::cli
