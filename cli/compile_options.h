#pragma once
// The flags `lull compile` and `lull bench compile` share, parsed into the
// compiler's one specification (compiler/compile_spec.h). Flags that map to a
// single setting are bound to the spec directly; the few that need parsing
// (lists, ms -> us, names) are held here and converted by compile_specs().
#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/parse_options.h"
#include "compiler/arrival_fit.h"
#include "compiler/adaptive_loads.h"
#include "compiler/compile_spec.h"

namespace lull::cli {

struct CompileFlags {
  compiler::CompileSpec spec;  // bound directly where one flag is one setting
  double slo_ms = 0;
  std::string workers, loads, batching = "max", models;
  std::string profile_cache = "on";  // --profile-cache on|off
  std::string arrivals = "poisson";  // --arrivals: a process, a list (gamma:1,2,4), or fit:FILE
  std::string fit_scale = "trace";   // --fit-scale trace|runtime (compiler::FitScale)
  bool md = false;
  int phase_cap = -1;  // --phase-cap; -1: the command's default (plan: compiler::kPlanPhaseCap, else 0)
};

// --arrivals as processes: parsed (schema/arrival_process.h), or fitted from
// the timestamps of fit:FILE, whose choice and reason go to `fit_note`.
// Throws UsageError naming the flag or the file.
// tracked:FILE (docs/user-guide.md, "Traffic whose rate moves") gives the
// trace's short-range pattern; its times and fit go to `tracked` when given.
struct TrackedTrace {
  std::string path;
  std::vector<std::int64_t> times_us;
  compiler::TrackedFit fit;
};
// `fit_scale`: --fit-scale's text, for fit:FILE (runtime: not with tracked:FILE).
std::vector<ArrivalProcess> compile_arrivals(const std::string& text, std::string* fit_note,
                                             TrackedTrace* tracked = nullptr, const std::string& fit_scale = "trace");

// The old spellings these commands refuse with a pointer to the new one:
// `--accuracy` (a fraction table elsewhere in lull) is `--accuracy-percent`.
std::vector<RenamedFlag> renamed_compile_flags();

// Adds the shared options to `desc`, bound to `flags`: the model options
// (profiles, SLO, MDP, solver) and --workers / --load-qps.
void add_compile_options(boost::program_options::options_description& desc, CompileFlags& flags);
// The model options alone, for commands that choose workers and loads
// themselves (lull plan).
void add_model_options(boost::program_options::options_description& desc, CompileFlags& flags);

// The solver and reduction options alone (no profiles, SLO, workers or loads),
// for commands that read those from a fleet description (--fleet).
void add_solve_options(boost::program_options::options_description& desc, CompileFlags& flags);

// --expect-lag and --expect-late (compile, plan and their --fleet forms):
// each a value it knows (--expect-lag transient where `transient` is
// allowed), and --expect-late on only with a lag term. Throws UsageError.
void check_expect_flags(const std::string& expect_lag, const std::string& expect_late, bool transient);

// The spec of the model options (no workers, no loads), validated but for
// those two. Throws UsageError naming the flag.
compiler::CompileSpec model_spec(const CompileFlags& flags);
// The spec of the solve options alone (inputs, SLO, workers, loads unset),
// validated but for those. Throws UsageError naming the flag.
compiler::CompileSpec solve_spec(const CompileFlags& flags);

// One spec per worker count (`--workers 60,70,80` or 20:100:10; the rest is
// shared), and per arrival process of --arrivals (gamma:1,2,4: one spec per
// worker count and process, workers outer); a fit's note goes to `fit_note`. Throws UsageError naming the flag for a
// value that does not parse or is out of range. `--load-qps auto:LO:HI` is accepted only when `adaptive` is given (it
// receives the grid; the specs then hold LO and HI).
std::vector<compiler::CompileSpec> compile_specs(const CompileFlags& flags,
                                                 std::optional<compiler::AdaptiveLoads>* adaptive = nullptr,
                                                 std::string* fit_note = nullptr, TrackedTrace* tracked = nullptr);

}  // namespace lull::cli
