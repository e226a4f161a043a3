// lull profiles import: RAMSIS artifact layout -> lull's profile JSON.
#include <iostream>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "compiler/profile/artifact_import.h"
#include "compiler/profile/profile_reduction.h"
#include "schema/profile_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_profiles_import(int argc, char** argv) {
  std::string dir, accuracy, task = "image", out;
  po::options_description desc("lull profiles import options");
  desc.add_options()("help", "show this help")
      ("artifact", po::value(&dir)->required(), "folder with <model>/<model>_bsize-<b>_profile.json")
      ("accuracy", po::value(&accuracy)->required(), "JSON map from model name to accuracy in percent")
      ("task", po::value(&task)->default_value("image"), "task name")
      ("out", po::value(&out)->required(), "profile JSON to write");
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull profiles import --artifact DIR --accuracy ACC.json [--task NAME] --out PROFILE.json"))
    return 0;
  const auto set = compiler::import_artifact_profiles(dir, accuracy, task);
  compiler::validate_profile_set(set, dir);
  write_profile_set_json(set, out);
  std::cerr << "lull profiles import: wrote " << set.models_size() << " models to " << out << "\n";
  return 0;
}

}  // namespace lull::cli
