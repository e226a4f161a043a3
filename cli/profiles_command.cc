// lull profiles import: RAMSIS artifact layout -> lull's profile JSON.
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/output_file.h"
#include "compiler/profile/artifact_import.h"
#include "compiler/profile/profile_reduction.h"
#include "schema/profile_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_profiles_import(int argc, char** argv) {
  std::string dir, accuracy, task, out;
  po::options_description desc("lull profiles import options");
  // clang-format off
  desc.add_options()
      ("artifact", po::value(&dir)->required(), "folder with <model>/<model>_bsize-<b>_profile.json")
      ("accuracy-percent", po::value(&accuracy)->required(), "the artifact's JSON map from model name to accuracy in percent")
      ("task", po::value(&task), "task name (default: the accuracy table's task field, else its file name's <task>_accuracy.json, else image)")
      ("out", po::value(&out)->required(), "profile JSON to write ('-' for stdout)");
  // clang-format on
  if (!parse_command_line(
          argc, argv, desc,
          "usage: lull profiles import --artifact DIR --accuracy-percent ACC.json [--task NAME] --out PROFILE.json",
          {nullptr, renamed_compile_flags(), nullptr}))
    return 0;
  const auto set = compiler::import_artifact_profiles(dir, accuracy, task);
  compiler::validate_profile_set(set, dir);
  write_output(out, profile_set_json_text(set, out));
  std::cerr << "lull profiles import: wrote " << set.models_size() << " models to " << out << "\n";
  return 0;
}

}  // namespace lull::cli
