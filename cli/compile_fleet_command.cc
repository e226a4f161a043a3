// lull compile --fleet: a fleet description in (docs/user-guide.md), one fleet
// policy file out (written atomically once everything is compiled), the
// chosen weights per class and load on stdout, optionally as JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/fleet_report.h"
#include "cli/number_lists.h"
#include "cli/output_file.h"
#include "cli/process_clock.h"
#include "cli/progress_line.h"
#include "compiler/fleet/fleet_compile.h"
#include "compiler/solver/solver_registry.h"
#include "schema/fleet_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_compile_fleet(int argc, char** argv) {
  CompileFlags flags;
  std::string fleet_path, loads_text, out_path, report_path, expect_lag = "off", expect_late = "off";
  double weight_step = 0.05;
  int count_spread = 0;
  po::options_description desc("lull compile --fleet options");
  // clang-format off
  desc.add_options()
      ("fleet", po::value(&fleet_path)->required(), "fleet description JSON (kinds, classes; docs/user-guide.md)")
      ("load-qps", po::value(&loads_text)->required(), "the fleet's load(s) in QPS; each class gets its share: 2000 | 1000,2000 | 500:3000:500")
      ("weight-step", po::value(&weight_step)->default_value(weight_step), "grid step of the weights searched (1/n)")
      ("count-spread", po::value(&count_spread)->default_value(count_spread),
       "each kind's library also gets sets for its count -N..+N (fewer after failures; the autoscaler's range)")
      ("out", po::value(&out_path)->required(), "fleet policy to write (binary protobuf; '-' for stdout, not a terminal)")
      ("report", po::value(&report_path), "JSON report to write ('-' for stdout)")
      ("expect-lag", po::value(&expect_lag)->default_value(expect_lag),
       "on: each chosen split is also reported as served through each kind's load estimate (the policies its "
       "500 ms count picks around the load; \"served\" in --report); off: at the compiled loads only")
      ("expect-late", po::value(&expect_late)->default_value(expect_late),
       "on (with --expect-lag on): the served figures count, of a batch that misses, only the queries expected to "
       "be late; off: the whole batch");
  // clang-format on
  add_solve_options(desc, flags);
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull compile --fleet FLEET.json --load-qps 1000,2000 --out FLEET.pb "
                          "[--weight-step 0.05] [--report R.json]",
                          {nullptr, renamed_compile_flags(), nullptr, ""}))
    return 0;
  check_binary_output(out_path, "--out");
  const compiler::CompileSpec spec = solve_spec(flags);
  check_expect_flags(expect_lag, expect_late, false);
  if (count_spread < 0 || count_spread > 1000) throw UsageError("--count-spread: must be in 0..1000");
  int steps = 0;
  try {
    steps = lull::weight_steps(weight_step);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::vector<double> loads = parse_number_list(loads_text, "--load-qps");
  std::sort(loads.begin(), loads.end());
  loads.erase(std::unique(loads.begin(), loads.end()), loads.end());
  const FleetDescription fleet = read_fleet_description(fleet_path);
  require_workers(fleet);
  auto solver = compiler::make_solver(spec.device, &std::cerr);
  ProgressLine progress(std::cerr);
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const auto result = compiler::compile_fleet(
      fleet, spec, loads, steps, *solver,
      [&](int cls, int kind, int done, int total, const compiler::LoadReport&) {
        if (elapsed() < 1.0) return;
        const auto& c = fleet.classes[static_cast<std::size_t>(cls)];
        char line[200];
        std::snprintf(line, sizeof line, "lull compile: class %s, kind %s: %d/%d loads, %.1f s", c.name.c_str(),
                      c.workers[static_cast<std::size_t>(kind)].kind.c_str(), done, total, elapsed());
        if (done == total)  // each load on a terminal; in a log, a line per finished kind
          progress.step(line);
        else
          progress.update(line);
      },
      count_spread, {expect_lag == "on", expect_late == "on"});
  progress.finish();
  write_binary_output(out_path, fleet_policy_bytes(result.policy), "--out");
  if (!report_path.empty()) write_output(report_path, fleet_compile_json(result.policy, result.splits));
  const bool stdout_taken = is_stdout(out_path) || is_stdout(report_path);
  std::fputs(fleet_compile_table(result.policy, result.splits).c_str(), stdout_taken ? stderr : stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "lull compile: wrote a fleet of %zu classes (%d policies) to %s in %.2f s (%s solver)\n",
               fleet.classes.size(), result.policies, out_path.c_str(), seconds_since_process_start(),
               solver->name().c_str());
  return 0;
}

}  // namespace lull::cli
