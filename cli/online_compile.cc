#include "cli/online_compile.h"

#include <iostream>

#include "cli/commands.h"
#include "compiler/emit/recorded_spec.h"
#include "runtime/core/policy_loader.h"
#include "schema/number_text.h"
#include "schema/policy_file.h"

namespace po = boost::program_options;

namespace lull::cli {

void add_online_compile_options(po::options_description& desc, OnlineCompileFlags& f) {
  // clang-format off
  desc.add_options()
      ("online-compile", po::value(&f.mode)->default_value(f.mode),
       "on: compile the policy missing for the workers up and the load in the background (needs --profiles) | off")
      ("accuracy-percent", po::value(&f.accuracy_percent),
       "online compilation: the artifact's accuracy table, in percent, when --profiles is an artifact folder")
      ("compile-device", po::value(&f.device)->default_value(f.device), "online compilation's solver: cpu | cuda | auto");
  // clang-format on
}

bool online_compile_enabled(const OnlineCompileFlags& f, const std::string& profiles) {
  if (f.mode != "on" && f.mode != "off")
    throw UsageError("--online-compile: expected 'on' or 'off', got '" + f.mode + "'");
  if (f.mode == "on" && profiles.empty())
    throw UsageError("--online-compile on needs --profiles (the profiles the policies were compiled from)");
  return f.mode == "on";
}

CompilerPolicySource::CompilerPolicySource(const std::string& policies_path, const std::string& profiles,
                                           const OnlineCompileFlags& flags) {
  const schema::PolicyLibrary lib = read_policy_library(policies_path);
  compiler::ProfileInputs inputs{profiles, flags.accuracy_percent, ""};
  compiler::CompileSpec spec;
  try {
    spec = compiler::recorded_compile_spec(lib.sets(0), inputs, flags.device);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(policies_path + ": sets[0]." + e.what());
  }
  compiler_ = std::make_unique<compiler::OnlineCompiler>(spec, &std::cerr);
}

core::PolicyTable CompilerPolicySource::compile(const core::PolicyRequest& r) {
  const schema::PolicySet set = compiler_->compile(r.workers, r.load_qps, r.arrivals);
  return core::policy_table_from_proto(set, core::PolicyExpectations{"", r.workers, 0},
                                       "online policy for " + std::to_string(r.workers) + " workers at " +
                                           number_text(r.load_qps) + " QPS, " + arrival_process_text(r.arrivals));
}

}  // namespace lull::cli
