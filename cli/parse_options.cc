#include "cli/parse_options.h"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "schema/bounded_file.h"

namespace po = boost::program_options;

namespace lull::cli {
namespace {

// PREFIX + option name in upper case, '-' as '_'.
std::string env_name(const std::string& prefix, std::string option) {
  std::transform(option.begin(), option.end(), option.begin(),
                 [](unsigned char c) { return c == '-' ? '_' : static_cast<char>(std::toupper(c)); });
  return prefix + option;
}

// The environment's settings for `all`; a variable with the prefix that names
// no option is refused (a typo must not be silently ignored).
po::parsed_options environment_options(const po::options_description& all, const std::string& prefix) {
  std::map<std::string, std::string> names;  // variable -> option
  for (const auto& o : all.options()) names[env_name(prefix, o->long_name())] = o->long_name();
  return po::parse_environment(all, [&](const std::string& var) -> std::string {
    if (var.rfind(prefix, 0) != 0) return "";
    const auto it = names.find(var);
    if (it == names.end())
      throw UsageError("environment variable " + var + ": no such option (" + prefix + "NAME for --name)");
    if (it->second == "help" || it->second == "config")
      throw UsageError("environment variable " + var + ": not a setting");
    return it->second;
  });
}

po::parsed_options config_file_options(const std::string& path, const po::options_description& all) {
  std::istringstream in;
  try {
    in.str(read_bounded_file(path, FileKind::kSettings));
  } catch (const FileReadError& e) {
    throw UsageError(std::string("--config ") + e.what());
  }
  try {
    return po::parse_config_file(in, all, false);
  } catch (const po::error& e) {
    throw UsageError("--config " + path + ": " + e.what());
  }
}

OptionsObserver g_observer = nullptr;

// Levenshtein distance, for suggesting a flag.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "unrecognised option '--slo'" and, when one long flag is near it (a prefix
// of it, or a few edits away), "; did you mean --slo-ms?".
std::string unknown_option_message(const po::unknown_option& e, const po::options_description& all) {
  std::string given = e.get_option_name();
  const std::string shown = given;
  while (!given.empty() && given.front() == '-') given.erase(0, 1);
  given = given.substr(0, given.find('='));
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, given.size() / 3) + 1;
  for (const auto& o : all.options()) {
    const std::string& name = o->long_name();
    if (name.empty()) continue;
    const std::size_t d = name.rfind(given, 0) == 0 && !given.empty() ? 1 : edit_distance(given, name);
    if (d < best_distance) best_distance = d, best = name;
  }
  std::string message = "unrecognised option '" + shown + "'";
  if (!best.empty()) message += "; did you mean --" + best + "?";
  return message;
}

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
  // clang-format off
  all.add_options()("help,h", "show this help");
  // clang-format on
  const bool settings = !extras.env_prefix.empty();
  // clang-format off
  if (settings)
    all.add_options()("config", po::value<std::string>(),
                      ("settings file: `name = value` lines with the long flag names; the environment "
                       "(" + extras.env_prefix + "NAME) and the command line override it").c_str());
  // clang-format on
  all.add(desc);
  require_ranged_unsigned(all);
  if (g_observer) g_observer(all);
  po::variables_map local;
  po::variables_map& vm = extras.vm ? *extras.vm : local;
  try {
    po::command_line_parser parser(argc, argv);
    // No guessing: boost accepts any unambiguous prefix (--slo for --slo-ms),
    // so a typo or a shortened flag would be taken silently.
    parser.options(all).style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing);
    if (extras.positional) parser.positional(*extras.positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n\n";
      if (extras.examples) std::cout << "Examples (from the repository root):\n" << extras.examples << "\n";
      std::cout << all << "\n";
      return false;
    }
    // po::store keeps the first value stored for an option: command line, then
    // environment, then file.
    if (settings) {
      po::store(environment_options(all, extras.env_prefix), vm);
      if (vm.count("config")) po::store(config_file_options(vm["config"].as<std::string>(), all), vm);
    }
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    throw UsageError(unknown_option_message(e, all));
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

bool names_flag(int argc, char** argv, const std::string& flag) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] == flag || std::string(argv[i]).rfind(flag + "=", 0) == 0) return true;
  return false;
}

}  // namespace lull::cli
