// lull policy library: joins policy sets compiled one worker count at a time
// (`lull compile --workers K`) into one policy library (schema::PolicyLibrary),
// the file `lull simulate --autoscale` and the online catalog pick from by
// worker count. Each input is verified and checked by the runtime's loader;
// the library is verified (one task and SLO, distinct worker counts) before
// it is written, atomically.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/parse_options.h"
#include "runtime/policy_loader.h"
#include "schema/policy_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_policy_library(int argc, char** argv) {
  std::vector<std::string> sets;
  std::string out;
  po::options_description desc("lull policy library options");
  // clang-format off
  desc.add_options()("sets", po::value(&sets)->multitoken(), "policy set files, one per worker count")
      ("out", po::value(&out), "policy library to write");
  // clang-format on
  po::positional_options_description pos;
  pos.add("sets", -1);
  ParseExtras extras;
  extras.positional = &pos;
  if (!parse_command_line(argc, argv, desc, "usage: lull policy library SET.pb... --out LIBRARY.pb", extras)) return 0;
  if (sets.empty())
    throw UsageError("name at least one policy set file (lull policy library SET.pb... --out LIBRARY.pb)");
  if (out.empty()) throw UsageError("--out is required (lull policy library --help)");
  schema::PolicyLibrary lib;
  for (const auto& path : sets) {
    schema::PolicySet set = read_policy_set(path);
    runtime::policy_table_from_proto(set, {}, path);
    *lib.add_sets() = std::move(set);
  }
  std::sort(lib.mutable_sets()->begin(), lib.mutable_sets()->end(),
            [](const schema::PolicySet& a, const schema::PolicySet& b) { return a.workers() < b.workers(); });
  seal_policy_library(lib);
  verify_policy_library(lib, out);
  write_policy_library(lib, out);
  std::printf("policy library %s: %d worker counts (%u..%u)\n", out.c_str(), lib.sets_size(), lib.sets(0).workers(),
              lib.sets(lib.sets_size() - 1).workers());
  return 0;
}

}  // namespace lull::cli
