// lull bench compile: times the compiler's phases (profile reduction,
// transitions, value iteration, expectations) for one or more worker counts
// and loads, with peak memory. Numbers go to docs/benchmarks.md.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/bench_grid.h"
#include "cli/commands.h"
#include "cli/compile_options.h"
#include "compiler/compile_inputs.h"
#include "compiler/compile_sweep.h"
#include "compiler/solver/solver_registry.h"

namespace po = boost::program_options;

namespace lull::cli {
namespace {

long peak_rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

}  // namespace

int run_bench_compile(int argc, char** argv) {
  CompileFlags flags;
  int repeat = 1;
  std::string grid, grid_out;
  po::options_description desc("lull bench compile options");
  // clang-format off
  desc.add_options()("repeat", po::value(&repeat)->default_value(1), "runs per sweep (best kept)")
      ("grid", po::value(&grid), "instead of a sweep, the grid 'table2' (paper Table 2); --device cpu,cuda side by side")
      ("grid-out", po::value(&grid_out), "also write the grid's markdown table to this file ('-' for stdout)");
  // clang-format on
  add_compile_options(desc, flags);
  if (!parse_command_line(
          argc, argv, desc,
          "usage: lull bench compile --profiles P --slo-ms 150 --workers 60[,70,80] --load-qps 2000|200:4000:200",
          {nullptr, renamed_compile_flags(), nullptr}))
    return 0;
  const auto specs = compile_specs(flags);
  if (!grid.empty()) {
    if (specs.size() > 1) std::cerr << "lull bench compile --grid: using the first worker count only\n";
    return run_bench_grid(specs.front(), grid, grid_out, repeat);
  }
  const auto inputs = compiler::load_compile_inputs(specs.front());  // shared by every worker count
  std::vector<compiler::SweepRequest> requests;
  for (const auto& spec : specs) requests.push_back({inputs.profiles, spec});
  auto solver = compiler::make_solver(specs.front().device, &std::cerr);
  std::printf("lull bench compile: solver %s, %zu worker count(s), %zu load(s) each, best of %d\n",
              solver->name().c_str(), requests.size(), specs.front().loads_qps.size(), repeat);
  std::printf("profiles: read %.3f s, validate %.3f s, reduce %.3f s\n\n", inputs.seconds.read, inputs.seconds.validate,
              inputs.seconds.reduce);
  std::printf("workers  policies  transitions_s  value_iter_s  expectations_s  wall_s\n");
  double grand = 0;
  for (const auto& req : requests) {
    double best = 1e300;
    compiler::PhaseSeconds best_phases;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto result = compiler::run_sweep(req, *solver);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (wall < best) {
        best = wall;
        best_phases = {};
        for (const auto& rep : result.reports) {
          best_phases.build += rep.seconds.build;
          best_phases.solve += rep.seconds.solve;
          best_phases.expect += rep.seconds.expect;
        }
      }
    }
    grand += best;
    std::printf("%7d  %8zu  %13.4f  %12.4f  %14.4f  %6.3f\n", req.spec.mdp.workers, req.spec.loads_qps.size(),
                best_phases.build, best_phases.solve, best_phases.expect, best);
  }
  std::printf("\ntotal wall %.3f s, peak resident memory %.1f MB\n", grand, peak_rss_kb() / 1024.0);
  return 0;
}

}  // namespace lull::cli
