#pragma once
// Online compilation's composition root, shared by `lull simulate` and
// `lull serve`: the flags (--online-compile on|off and what compiling
// needs), and the adapter that puts the compiler's OnlineCompiler behind the
// runtime's PolicyCompiler interface. The runtime never sees the compiler;
// this file is where the two meet.
#include <boost/program_options.hpp>
#include <memory>
#include <string>

#include "compiler/online/online_compiler.h"
#include "runtime/core/policy_provider.h"

namespace lull::cli {

struct OnlineCompileFlags {
  std::string mode = "off";      // on | off
  std::string accuracy_percent;  // the artifact's accuracy table, for an artifact folder
  std::string device = "cpu";    // solver for online compilations
};

// Adds --online-compile, --accuracy-percent and --compile-device. The
// profiles come from the command's own --profiles.
void add_online_compile_options(boost::program_options::options_description& desc, OnlineCompileFlags& flags);

// True for "on", false for "off"; UsageError otherwise or when `profiles`
// is empty with "on".
bool online_compile_enabled(const OnlineCompileFlags& flags, const std::string& profiles);

// Compiles, for the runtime, policies that match the library at
// `policies_path`: the compile settings its first set records
// (compiler::recorded_compile_spec) over `profiles`. Each result is checked by
// the runtime's loader like a policy file.
class CompilerPolicySource final : public core::PolicyCompiler {
 public:
  CompilerPolicySource(const std::string& policies_path, const std::string& profiles, const OnlineCompileFlags& flags);
  core::PolicyTable compile(const core::PolicyRequest& request) override;
  void cancel() override { compiler_->cancel(); }
  // Later compilations use these profiles (compiler::OnlineCompiler::use_profiles).
  void use_profiles(compiler::ReducedProfiles profiles) { compiler_->use_profiles(std::move(profiles)); }
  const compiler::OnlineCompiler& compiler() const { return *compiler_; }

 private:
  std::unique_ptr<compiler::OnlineCompiler> compiler_;
};

}  // namespace lull::cli
