#include "cli/parse_options.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/option_ranges.h"

namespace po = boost::program_options;

namespace lull::cli {
namespace {

OptionsObserver g_observer = nullptr;

void require_ranged_unsigned(const po::options_description& options) {
  for (const auto& o : options.options())
    if (is_unsigned_option(o->semantic().get()) && !dynamic_cast<const RangedOption*>(o->semantic().get()))
      throw std::logic_error("option --" + o->long_name() +
                             " stores an unsigned number: declare it with ranged_value (cli/option_ranges.h)");
}

}  // namespace

void set_options_observer(OptionsObserver observer) { g_observer = observer; }

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
  require_ranged_unsigned(all);
  if (g_observer) g_observer(all);
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
