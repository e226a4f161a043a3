#pragma once
// The short table `lull compile` prints when it is done: per load (one set)
// or per worker count (a library), the expected accuracy and violation, and
// which loads are beyond what the workers can serve. The JSON report is the
// machine-readable form (--report); this one is for the person at the prompt.
#include <string>
#include <vector>

#include "compiler/compile_library.h"

namespace lull::cli {

std::string compile_summary_table(const std::vector<compiler::LibrarySweep>& sweeps);

}  // namespace lull::cli
