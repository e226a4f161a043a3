#include "cli/bench_grid.h"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/number_lists.h"
#include "cli/output_file.h"
#include "compiler/bench/table2_grid.h"
#include "compiler/compile_inputs.h"

namespace lull::cli {

int run_bench_grid(const compiler::CompileSpec& spec, const std::string& grid, const std::string& markdown_path,
                   int repeat) {
  if (grid != "table2") throw UsageError("--grid: expected 'table2', got '" + grid + "'");
  const auto inputs = compiler::load_compile_inputs(spec);  // validates and reduces the profiles
  compiler::Table2Options o;
  o.mdp = spec.mdp;
  o.mdp.load_qps = spec.loads_qps.front();
  o.solve = spec.solve;
  o.devices = split_commas(spec.device);
  o.repeat = repeat;
  if (spec.loads_qps.size() > 1) std::cerr << "lull bench compile --grid: using the first load only\n";

  std::ostringstream head;
  head << "Table 2 grid: " << inputs.profiles.models.size() << " given models and the set interpolated from them at "
       << o.interpolation_step << " accuracy steps; SLO " << o.mdp.slo_us / 1000 << " ms, " << o.mdp.workers
       << " workers, " << o.mdp.load_qps << " QPS, N = " << o.mdp.max_queue << ", horizon " << o.solve.horizon
       << ", best of " << repeat << "\n\n";
  for (const auto& d : o.devices) head << "- " << d << ": " << compiler::table2_device_description(d) << "\n";
  std::cout << head.str() << "\n" << std::flush;

  const auto cells = compiler::run_table2_grid(inputs.profiles, o, &std::cerr);
  const std::string table = compiler::table2_markdown(cells, o.devices);
  std::cout << table;
  // stdout already holds exactly this text, so '-' needs nothing more.
  if (!markdown_path.empty() && !is_stdout(markdown_path)) write_output(markdown_path, head.str() + "\n" + table);
  bool any_device_complete = false;
  for (const auto& d : o.devices) {
    bool complete = true, seen = false;
    for (const auto& c : cells)
      if (c.device == d || (d == "auto" && (c.device == "cpu" || c.device == "cuda"))) {
        seen = true;
        complete &= c.error.empty();
      }
    any_device_complete |= seen && complete;
  }
  return any_device_complete ? 0 : 2;
}

}  // namespace lull::cli
