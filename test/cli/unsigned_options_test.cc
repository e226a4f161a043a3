// Every unsigned flag of every subcommand refuses a negative number (issue
// 25, finding 4: Boost reads "-1" into an unsigned option as its largest
// value, so `serve --max-body-bytes -1` removed the body cap). The test walks
// the command table and each command's declared options in-process, so a flag
// added later is covered without naming it here.
#include <catch2/catch.hpp>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "cli/parse_options.h"

namespace po = boost::program_options;

namespace {

std::vector<std::string> g_unsigned;  // the last parsed command's unsigned options

void collect_unsigned(const po::options_description& options) {
  g_unsigned.clear();
  for (const auto& o : options.options())
    if (lull::cli::is_unsigned_option(o->semantic().get())) g_unsigned.push_back(o->long_name());
}

// Runs `cmd` with `args` (stdout discarded); the UsageError's text, or "" when none.
std::string run(const lull::cli::Command& cmd, std::vector<std::string> args) {
  std::string name = cmd.name;
  args.insert(args.begin(), name.substr(name.rfind(' ') + 1));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream discard;
  auto* old = std::cout.rdbuf(discard.rdbuf());
  std::string error;
  try {
    cmd.run(static_cast<int>(args.size()), argv.data());
  } catch (const lull::cli::UsageError& e) {
    error = e.what();
  }
  std::cout.rdbuf(old);
  return error;
}

}  // namespace

TEST_CASE("every unsigned flag of every subcommand refuses -1, naming the flag", "[cli][limits]") {
  lull::cli::set_options_observer(&collect_unsigned);
  std::set<std::string> seen;
  for (const auto* cmd = lull::cli::kCommands; cmd->name; ++cmd) {
    INFO("lull " << cmd->name);
    REQUIRE(run(*cmd, {"--help"}).empty());  // declares its options (none unranged, or this throws logic_error)
    const auto flags = g_unsigned;
    for (const auto& flag : flags) {
      seen.insert(flag);
      for (const std::vector<std::string>& args :
           {std::vector<std::string>{"--" + flag, "-1"}, std::vector<std::string>{"--" + flag + "=-1"},
            std::vector<std::string>{"--" + flag + "=-0"}, std::vector<std::string>{"--" + flag, "1e99"}}) {
        INFO(args.front());
        const std::string error = run(*cmd, args);
        CHECK(error.find("--" + flag + ": must be a whole number") != std::string::npos);
        CHECK(error.find('\n') == std::string::npos);
      }
    }
  }
  lull::cli::set_options_observer(nullptr);
  // The flags an adversarial tester found or that are unsigned today: the walk must see them.
  for (const char* flag : {"max-body-bytes", "seed", "workers"}) CHECK(seen.count(flag) == 1);
}

TEST_CASE("ranged unsigned options: declared minimums and maximums, signs and junk refused", "[cli][limits]") {
  using lull::cli::unsigned_text_in_range;
  CHECK(unsigned_text_in_range("1", 1, 10));
  CHECK(unsigned_text_in_range(" 10 ", 1, 10));
  CHECK_FALSE(unsigned_text_in_range("0", 1, 10));
  CHECK_FALSE(unsigned_text_in_range("11", 1, 10));
  CHECK_FALSE(unsigned_text_in_range("-1", 0, 10));
  CHECK_FALSE(unsigned_text_in_range("+1", 0, 10));
  CHECK_FALSE(unsigned_text_in_range(" -1", 0, 10));
  CHECK_FALSE(unsigned_text_in_range("1.5", 0, 10));
  CHECK_FALSE(unsigned_text_in_range("", 0, 10));
  CHECK_FALSE(unsigned_text_in_range("99999999999999999999999", 0, UINTMAX_MAX));
  CHECK(unsigned_text_in_range("18446744073709551615", 0, UINTMAX_MAX));
  CHECK_FALSE(unsigned_text_in_range("18446744073709551616", 0, UINTMAX_MAX));

  std::size_t bytes = 0;
  po::options_description desc;
  // clang-format off
  desc.add_options()("max-body-bytes", lull::cli::ranged_value<std::size_t>(&bytes, 1, 1 << 30));
  // clang-format on
  auto parse = [&](const char* value) {
    const char* argv[] = {"serve", "--max-body-bytes", value};
    po::variables_map vm;
    po::store(po::parse_command_line(3, argv, desc), vm);
    po::notify(vm);
  };
  CHECK_THROWS_WITH(parse("0"), "--max-body-bytes: must be a whole number in 1..1073741824 (got '0')");
  CHECK_THROWS_WITH(parse("-1"), "--max-body-bytes: must be a whole number in 1..1073741824 (got '-1')");
  CHECK_THROWS_WITH(parse("1073741825"), Catch::Contains("1..1073741824"));
  parse("4096");
  CHECK(bytes == 4096);
}
