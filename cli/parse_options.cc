#include "cli/parse_options.h"

#include <iostream>

#include "cli/commands.h"

namespace po = boost::program_options;

namespace lull::cli {

bool parse_command_line(int argc, char** argv, const po::options_description& desc, const char* usage,
                        const po::positional_options_description* positional) {
  po::variables_map vm;
  try {
    po::command_line_parser parser(argc, argv);
    parser.options(desc);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n\n" << desc << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

}  // namespace lull::cli
