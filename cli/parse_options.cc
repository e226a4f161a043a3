#include "cli/parse_options.h"

#include <iostream>

#include "cli/commands.h"

namespace po = boost::program_options;

namespace lull::cli {

bool parse_command_line(int argc, char** argv, const po::options_description& desc, const char* usage,
                        const ParseExtras& extras) {
  for (int i = 1; i < argc; ++i)
    for (const auto& r : extras.renamed) {
      const std::string arg = argv[i];
      if (arg == r.old_flag || arg.rfind(r.old_flag + "=", 0) == 0) throw UsageError(r.message);
    }
  po::options_description all;
  all.add_options()("help,h", "show this help");
  all.add(desc);
  po::variables_map local;
  po::variables_map& vm = extras.vm ? *extras.vm : local;
  try {
    po::command_line_parser parser(argc, argv);
    parser.options(all);
    if (extras.positional) parser.positional(*extras.positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n\n" << all << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

}  // namespace lull::cli
