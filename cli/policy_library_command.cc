// lull policy library: joins policy sets compiled one worker count (and
// arrival pattern) at a time (`lull compile --workers K --arrivals P`) into
// one policy library (schema::PolicyLibrary), the file `lull simulate
// --autoscale` and the online catalog pick from by worker count and
// pattern. Each input is verified and checked by the runtime's loader; the
// library is verified (one task and SLO, distinct (workers, pattern) pairs)
// before it is written, atomically. The line it prints counts worker counts
// and patterns, not sets.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/parse_options.h"
#include "runtime/core/policy_loader.h"
#include "schema/policy_file.h"

namespace po = boost::program_options;

namespace lull::cli {

int run_policy_library(int argc, char** argv) {
  std::vector<std::string> sets;
  std::string out;
  po::options_description desc("lull policy library options");
  // clang-format off
  desc.add_options()("sets", po::value(&sets)->multitoken(), "policy set files, one per worker count and arrival pattern")
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
  std::set<unsigned> counts;
  std::vector<std::string> patterns;  // in the order first seen
  for (const auto& path : sets) {
    schema::PolicySet set = read_policy_set(path);
    const std::string pattern = arrival_process_text(core::policy_table_from_proto(set, {}, path).arrivals);
    if (std::find(patterns.begin(), patterns.end(), pattern) == patterns.end()) patterns.push_back(pattern);
    counts.insert(set.workers());
    *lib.add_sets() = std::move(set);
  }
  // Ascending workers; a count's patterns as given.
  std::stable_sort(lib.mutable_sets()->begin(), lib.mutable_sets()->end(),
                   [](const schema::PolicySet& a, const schema::PolicySet& b) { return a.workers() < b.workers(); });
  seal_policy_library(lib);
  verify_policy_library(lib, out);
  write_policy_library(lib, out);
  std::printf("policy library %s: %zu worker counts (%u..%u)", out.c_str(), counts.size(), *counts.begin(),
              *counts.rbegin());
  if (patterns != std::vector<std::string>{"poisson"}) {
    std::string names;
    for (const auto& p : patterns) names += (names.empty() ? "" : ", ") + p;
    std::printf(", %zu arrival pattern%s (%s): %d sets", patterns.size(), patterns.size() == 1 ? "" : "s",
                names.c_str(), lib.sets_size());
  }
  std::printf("\n");
  return 0;
}

}  // namespace lull::cli
