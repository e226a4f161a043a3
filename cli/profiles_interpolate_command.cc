// lull profiles interpolate: the paper's synthetic model sets (section 7.3.2),
// models interpolated along the accuracy/latency Pareto front of measured ones.
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/number_lists.h"
#include "cli/output_file.h"
#include "compiler/profile/profile_interpolation.h"
#include "compiler/profile/profile_source.h"
#include "schema/profile_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_profiles_interpolate(int argc, char** argv) {
  std::string profiles, accuracy, task, models, out;
  compiler::InterpolationOptions opts;
  po::options_description desc("lull profiles interpolate options");
  // clang-format off
  desc.add_options()
      ("profiles", po::value(&profiles)->required(), "profile set: lull JSON file, or a RAMSIS artifact folder")
      ("accuracy-percent", po::value(&accuracy), "the artifact's accuracy table, in percent, for an artifact folder")
      ("task", po::value(&task), "task name (overrides the profile's)")
      ("models", po::value(&models), "comma-separated models to interpolate between (default: all; the Pareto front is used)")
      ("step", po::value(&opts.step)->default_value(0.005, "0.005"), "accuracy step as a fraction (0.005 = 0.5 points)")
      ("percentile", po::value(&opts.percentile)->default_value(95), "latency percentile the originals are reduced at")
      ("batches", po::value(&opts.profiled_batches)->default_value(32), "batch sizes 1..B written for each new model")
      ("out", po::value(&out)->required(), "profile JSON to write ('-' for stdout)");
  // clang-format on
  if (!parse_command_line(
          argc, argv, desc,
          "usage: lull profiles interpolate --profiles P [--accuracy-percent ACC.json] [--models a,b,...] "
          "--step 0.005 --out P60.json",
          {nullptr, renamed_compile_flags(), nullptr}))
    return 0;
  if (!(opts.step > 0 && opts.step < 1))
    throw UsageError("--step: must be in (0, 1) (got " + std::to_string(opts.step) + ")");
  if (!(opts.percentile > 0 && opts.percentile <= 100)) throw UsageError("--percentile: must be in (0, 100]");
  if (opts.profiled_batches < 1 || opts.profiled_batches > 1000) throw UsageError("--batches: must be in 1..1000");
  opts.models = split_commas(models);
  const auto set = compiler::load_profile_source(profiles, accuracy, task);
  const auto synthetic = compiler::interpolate_profile_set(set, opts, profiles);
  write_output(out, profile_set_json_text(synthetic, out));
  std::cerr << "lull profiles interpolate: wrote " << synthetic.models_size() << " models ("
            << synthetic.models_size() - static_cast<int>(opts.models.empty() ? set.models_size() : opts.models.size())
            << " interpolated) to " << out << "\n";
  return 0;
}

}  // namespace lull::cli
