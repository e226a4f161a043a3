#pragma once
// The compile specification a policy set records, read in this one place:
// what online compilation (compiler/online/) and the drift recompiler
// (runtime/session/drift_recompiler, through compiler/online/drift_recompile) compile again with, so that a policy
// compiled later is bit for bit what `lull compile` would have written with those settings. The writing side is
// policy_builder (each policy's PolicyInputs).
#include <string>

#include "compiler/compile_spec.h"
#include "schema/policy.pb.h"

namespace lull::compiler {

// The set's task, SLO, worker count, models (by name, so a reduction keeps
// exactly those), every policy's load, its arrival process, and the MDP and solver settings its
// first policy's inputs record; profiles from `inputs`, solved on `device`.
// An interval count of 0 (not recorded) keeps the default. Throws
// std::invalid_argument naming the field when the set holds no policy or
// does not record a setting it needs (percentile, discretization, batching).
CompileSpec recorded_compile_spec(const schema::PolicySet& set, ProfileInputs inputs, const std::string& device);

}  // namespace lull::compiler
