// lull: the command-line entry point. Finds the subcommand in the table and
// turns any error into one line on stderr with exit code 2.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/process_clock.h"
#include "runtime/log/log_settings.h"
#include "runtime/frontend/build_info.h"
#include "schema/protobuf_log.h"

namespace {

void print_usage(std::ostream& out) {
  out << "lull: compile and serve accuracy-maximizing inference policies\n\n"
         "usage: lull <command> [options]   (lull help <command> or lull <command> --help for its options; lull "
         "--version)\n\n"
         "Every output flag takes '-' for stdout.\n\ncommands:\n";
  for (const auto* c = lull::cli::kCommands; c->name; ++c)
    // At least two spaces after the name: the names are read back from this
    // list (test/cli/cli_conventions_test.cc), and some have two words.
    out << "  " << c->name << std::string(std::strlen(c->name) < 20 ? 22 - std::strlen(c->name) : 2, ' ') << c->summary
        << "\n";
}

const lull::cli::Command* find_command(int argc, char** argv, int* words) {
  if (argc >= 3) {
    const std::string two = std::string(argv[1]) + " " + argv[2];
    for (const auto* c = lull::cli::kCommands; c->name; ++c)
      if (two == c->name) {
        *words = 2;
        return c;
      }
  }
  for (const auto* c = lull::cli::kCommands; c->name; ++c)
    if (std::string(argv[1]) == c->name) {
      *words = 1;
      return c;
    }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  lull::cli::mark_process_start();
  lull::route_protobuf_log();  // protobuf's own messages: one "lull: protobuf:" line, or inside a reader's error
  if (argc >= 2 && (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V"))) {
    const std::string commit = lull::frontend::build_git_commit();
    std::cout << "lull " << lull::frontend::build_version();
    if (commit != "unknown") std::cout << " (git " << commit << ")";
    std::cout << "\n";
    return 0;
  }
  // `lull help CMD` is `lull CMD --help`.
  std::vector<char*> help_args;
  if (argc >= 3 && !std::strcmp(argv[1], "help")) {
    static char help_flag[] = "--help";
    help_args.assign(argv, argv + argc);
    help_args.erase(help_args.begin() + 1);
    help_args.push_back(help_flag);
    argc = static_cast<int>(help_args.size());
    argv = help_args.data();
  }
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  int words = 0;
  const auto* cmd = find_command(argc, argv, &words);
  if (!cmd) {
    std::string group = argv[1];
    bool is_group = false;
    for (const auto* c = lull::cli::kCommands; c->name; ++c)
      if (std::string(c->name).rfind(group + " ", 0) == 0) is_group = true;
    if (is_group) {
      std::cerr << "lull " << group << ": expected one of:";
      for (const auto* c = lull::cli::kCommands; c->name; ++c)
        if (std::string(c->name).rfind(group + " ", 0) == 0) std::cerr << " '" << c->name << "'";
      std::cerr << "\n";
    } else {
      std::cerr << "lull: unknown command '" << argv[1] << "' (lull --help lists them)\n";
    }
    return 2;
  }
  lull::log::set_name(std::string("lull ") + cmd->name);  // every log line names the command
  try {
    return cmd->run(argc - words, argv + words);
  } catch (const std::exception& e) {
    // One line, always: some library messages carry their own line breaks.
    std::string msg = e.what();
    for (auto& c : msg)
      if (c == '\n' || c == '\r') c = ' ';
    while (!msg.empty() && msg.back() == ' ') msg.pop_back();
    std::cerr << "lull " << cmd->name << ": " << msg << "\n";
    return 2;
  }
}
