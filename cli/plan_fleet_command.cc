// lull plan --fleet: per SLO class of a fleet description, the cheapest mix
// of worker kinds and counts meeting the class's target at its share of a
// fleet load, each kind alone beside it (compiler/fleet/fleet_plan.h);
// optionally the description with those workers, for lull compile --fleet.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/fleet_report.h"
#include "cli/output_file.h"
#include "cli/process_clock.h"
#include "cli/progress_line.h"
#include "compiler/fleet/fleet_plan.h"
#include "compiler/solver/solver_registry.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_plan_fleet(int argc, char** argv) {
  CompileFlags flags;
  std::string fleet_path, out_path, fleet_out_path, expect_lag = "off", expect_late = "off";
  double load_qps = 0, weight_step = 0.05;
  int max_workers = 1000;
  po::options_description desc("lull plan --fleet options");
  // clang-format off
  desc.add_options()
      ("fleet", po::value(&fleet_path)->required(), "fleet description JSON (kinds with prices, classes; docs/user-guide.md)")
      ("load-qps", po::value(&load_qps)->required(), "the fleet's load (QPS); each class gets its share")
      ("weight-step", po::value(&weight_step)->default_value(weight_step), "grid step of the splits searched (1/n)")
      ("max-workers", po::value(&max_workers)->default_value(max_workers), "the search's largest count per kind")
      ("out", po::value(&out_path), "plan JSON to write ('-' for stdout)")
      ("fleet-out", po::value(&fleet_out_path), "fleet description with the plan's workers, for lull compile --fleet ('-' for stdout)")
      ("expect-lag", po::value(&expect_lag)->default_value(expect_lag),
       "on: each class's cheapest mix is also reported as served through each kind's 500 ms load estimate (a "
       "library at its count on a load grid around its share; \"served\" in --out); the counts stay chosen on the "
       "compiled figures")
      ("expect-late", po::value(&expect_late)->default_value(expect_late),
       "on (with --expect-lag on): the served figures count, of a batch that misses, only the queries expected to "
       "be late; off: the whole batch");
  // clang-format on
  add_solve_options(desc, flags);
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull plan --fleet FLEET.json --load-qps 3000 [--weight-step 0.05] [--out PLAN.json]",
                          {nullptr, renamed_compile_flags(), nullptr, ""}))
    return 0;
  const compiler::CompileSpec spec = solve_spec(flags);
  if (is_stdout(out_path) && is_stdout(fleet_out_path)) throw UsageError("--out and --fleet-out: only one may be '-'");
  if (!(load_qps > 0 && load_qps <= 1e6)) throw UsageError("--load-qps: must be in (0, 1000000]");
  if (max_workers < 1) throw UsageError("--max-workers: must be at least 1");
  check_expect_flags(expect_lag, expect_late, false);
  int steps = 0;
  try {
    steps = lull::weight_steps(weight_step);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const FleetDescription fleet = read_fleet_description(fleet_path);
  auto solver = compiler::make_solver(spec.device, &std::cerr);
  ProgressLine progress(std::cerr);
  const auto plan =
      compiler::plan_fleet(fleet, spec, load_qps, steps, max_workers, *solver,
                           [&](const std::string& stage, std::size_t solves) {
                             char line[200];
                             std::snprintf(line, sizeof line, "lull plan: %s, %zu policies compiled, %.1f s",
                                           stage.c_str(), solves, seconds_since_process_start());
                             progress.step(line);
                           },
                           {expect_lag == "on", expect_late == "on"});
  progress.finish();
  // Both outputs made before either is written: a refused one leaves no file.
  const std::string planned = fleet_out_path.empty() ? "" : planned_fleet_json(fleet, plan);
  if (!out_path.empty()) write_output(out_path, fleet_plan_json(plan, load_qps));
  if (!fleet_out_path.empty()) write_output(fleet_out_path, planned);
  std::fputs(fleet_plan_table(plan, load_qps).c_str(),
             is_stdout(out_path) || is_stdout(fleet_out_path) ? stderr : stdout);
  return 0;
}

}  // namespace lull::cli
