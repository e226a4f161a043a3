#pragma once
// The options `lull compile` and `lull bench compile` share: where the
// profiles are, how they are reduced, and the MDP's settings. Validation turns
// every bad value into a UsageError naming the flag or the file and field.
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "cli/parse_options.h"
#include "compiler/compile_sweep.h"

namespace lull::cli {

struct CompileArgs {
  std::string profiles, accuracy, task;
  double slo_ms = 0;
  std::string workers = "", loads = "";
  int intervals = 100;
  bool md = false;
  std::string batching = "max";
  int max_queue = 32;
  double percentile = 95;
  std::string models;
  bool all_models = false;
  int horizon = 100;
  std::string device = "auto";
};

// Adds the shared options to `desc`, bound to `args`.
void add_compile_options(boost::program_options::options_description& desc, CompileArgs& args);

// Loads and reduces the profiles, validates everything, and returns one
// request per worker count (the loads are shared).
std::vector<compiler::SweepRequest> make_sweep_requests(const CompileArgs& args);

}  // namespace lull::cli
