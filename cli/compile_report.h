#pragma once
// The compile report: one JSON object with the expectations, sizes and
// per-phase seconds of every policy of a sweep (or of each worker count's
// sweep, for a library), and the seconds of the whole command by phase
// (setup, read, validate, reduce, solve, write).
#include <string>
#include <vector>

#include "compiler/compile_inputs.h"
#include "compiler/compile_library.h"
#include "compiler/compile_sweep.h"

namespace lull::cli {

// Wall seconds of one `lull compile` by phase.
struct CompileSeconds {
  double setup = 0;               // process start -> reading: options, solver choice
  compiler::InputSeconds inputs;  // read, validate, reduce
  double solve = 0;               // the sweep: MDPs, solves, policies
  double write = 0;               // the policy set, written atomically
  double total = 0;               // process start -> the report
};

// One worker count: the sweep's policies at top level; `load_grid` (the
// adaptive grid's loads and rounds) only when `adaptive`.
std::string compile_report_json(const compiler::LibrarySweep& sweep, bool adaptive, const std::string& device,
                                const CompileSeconds& seconds);
// A library: "workers" lists the counts; "sets" holds one object per count
// with its load grid and policies.
std::string library_report_json(const std::vector<compiler::LibrarySweep>& sweeps, bool adaptive,
                                const std::string& device, const CompileSeconds& seconds);

}  // namespace lull::cli
