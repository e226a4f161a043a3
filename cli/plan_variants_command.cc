// lull plan variants: model variants from the plan. On K workers
// with a per-worker memory budget, the set of models each load of a sweep
// should use (compiler/plan/variant_plan.h says how it is picked and why the
// sets nest); consecutive loads with the same set become one variant, whose
// policy set (compiled at every load of the sweep, as `lull compile --models`
// would) is written to the output folder with a manifest that
// `lull serve --variant-sets DIR/variants.json` reads. With a range of worker
// counts (--workers A:B:S, for --autoscale) the sets are picked on A and each
// variant's file is a policy library over every count. Each file is written
// atomically, the manifest last, so a manifest names only finished files.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/output_file.h"
#include "cli/plan_variants_output.h"
#include "cli/process_clock.h"
#include "cli/progress_line.h"
#include "compiler/compile_inputs.h"
#include "compiler/plan/variant_libraries.h"
#include "compiler/plan/variant_plan.h"
#include "compiler/solver/solver_registry.h"
#include "schema/atomic_file.h"
#include "schema/policy_file.h"
#include "schema/variant_manifest.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_plan_variants(int argc, char** argv) {
  CompileFlags flags;
  compiler::VariantPlanRequest req;
  std::string out_dir;
  po::options_description desc("lull plan variants options");
  add_compile_options(desc, flags);
  // clang-format off
  desc.add_options()
      ("max-violation", po::value(&req.target.max_violation)->required(), "target expected violation rate, in (0, 1)")
      ("min-accuracy", po::value(&req.target.min_accuracy)->default_value(0), "minimum expected accuracy, in (0, 1) (0: none)")
      ("worker-memory-mb", po::value(&req.worker_memory_mb)->default_value(0),
       "memory per worker (MiB): only model sets that fit (profiles need memory_mb; 0: every set fits)")
      ("variants-out", po::value(&out_dir)->required(),
       "folder to write the variants' policy sets (variant-I.pb) and their manifest (variants.json) to");
  // clang-format on
  if (!parse_command_line(
          argc, argv, desc,
          "usage: lull plan variants --profiles P --slo-ms 70 --workers 2 (or a range 1:4:1) --load-qps 5:100:5 "
          "--max-violation 0.01 --worker-memory-mb 1500 --variants-out DIR",
          {nullptr, renamed_compile_flags(), nullptr}))
    return 0;
  auto specs = compile_specs(flags);
  std::stable_sort(specs.begin(), specs.end(), [](const compiler::CompileSpec& a, const compiler::CompileSpec& b) {
    return a.mdp.workers < b.mdp.workers;
  });
  // A range (A:B:S): the variants are picked on A, each compiled for every
  // count into a library (compiler/plan/variant_libraries.h).
  req.spec = specs.front();
  if (is_stdout(out_dir)) throw UsageError("--variants-out: a folder of files does not go to stdout; name a folder");
  if (std::filesystem::exists(out_dir) && !std::filesystem::is_directory(out_dir))
    throw UsageError("--variants-out: " + out_dir + " exists and is not a folder");
  auto solver = compiler::make_solver(req.spec.device, &std::cerr);
  const auto inputs = compiler::load_compile_inputs(req.spec);
  ProgressLine progress(std::cerr);
  compiler::VariantPlan plan;
  try {
    plan = compiler::plan_variants(req, inputs.profiles, *solver, [&](const std::string& stage, std::size_t solves) {
      char line[160];
      std::snprintf(line, sizeof line, "lull plan variants: %s, %zu policies compiled, %.1f s", stage.c_str(), solves,
                    seconds_since_process_start());
      progress.step(line);
    });
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::vector<std::vector<compiler::LibrarySweep>> libraries;
  if (specs.size() > 1)
    libraries = compiler::variant_libraries(
        plan, inputs.profiles, specs, *solver,
        [&](int set, int sets, int done, int total, const compiler::LoadReport&) {
          char line[160];
          std::snprintf(line, sizeof line, "lull plan variants: libraries: count %d/%d, load %d/%d, %.1f s", set + 1,
                        sets, done, total, seconds_since_process_start());
          if (done == total)  // each load on a terminal; in a log, a line per finished count
            progress.step(line);
          else
            progress.update(line);
        });
  progress.finish();
  VariantsContext ctx{inputs.profiles.task, flags.slo_ms, {}, {}, {}};
  for (const auto& s : specs) ctx.worker_counts.push_back(s.mdp.workers);
  for (const auto& m : inputs.profiles.models) ctx.model_names.push_back(m.name);
  std::filesystem::create_directories(out_dir);
  for (std::size_t i = 0; i < plan.variants.size(); ++i) {
    ctx.files.push_back(variant_file_name(i));
    const std::string path = (std::filesystem::path(out_dir) / ctx.files.back()).string();
    if (libraries.empty())
      write_policy_set(plan.variants[i].sweep.set, path);
    else
      write_policy_library(compiler::policy_library_of(libraries[i]), path);
  }
  write_file_atomically((std::filesystem::path(out_dir) / kVariantManifestName).string(),
                        variants_manifest_json(req, plan, ctx));
  std::fputs(variants_table(req, plan, ctx).c_str(), stdout);
  for (const auto& l : plan.loads)
    if (!l.meets_target)
      std::fprintf(stderr,
                   "lull plan variants: warning: at %g QPS no model set meets the target on %d workers (the "
                   "lowest expected violation: %.4f)\n",
                   l.load_qps, req.spec.mdp.workers, l.expected.violation_rate);
  if (plan.variants.size() == 1)
    std::fprintf(stderr,
                 "lull plan variants: one set serves every load: nothing to switch (lull serve --variant-sets "
                 "needs two variants)\n");
  std::fprintf(stderr, "lull plan variants: wrote %zu variants to %s in %.2f s (%zu policies compiled)\n",
               plan.variants.size(), out_dir.c_str(), seconds_since_process_start(), plan.solves);
  return 0;
}

}  // namespace lull::cli
