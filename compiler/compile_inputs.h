#pragma once
// The compiler's input stage: from a compile spec to the reduced profiles a
// sweep runs on, in three timed phases (read the profile file or artifact
// folder, validate it, reduce it), then the SLO check. The CLI only fills the
// spec; everything from the paths on happens here.
#include "compiler/compile_spec.h"
#include "compiler/profile/model_table.h"

namespace lull::compiler {

struct InputSeconds {
  double read = 0;      // profile JSON or artifact files -> ProfileSet
  double validate = 0;  // validate_profile_set
  double reduce = 0;    // percentile, OLS fill, model choice / Pareto front
};

struct CompileInputs {
  ReducedProfiles profiles;
  InputSeconds seconds;
};

// Validates the spec (std::invalid_argument naming the flag), reads, validates
// and reduces the profiles (errors name the file and field), and checks that
// the SLO is feasible.
CompileInputs load_compile_inputs(const CompileSpec& spec);

}  // namespace lull::compiler
