#pragma once
// The compile report: one JSON object with the expectations, sizes and
// per-phase seconds of every policy of a sweep, and the seconds of the whole
// command by phase (setup, read, validate, reduce, solve, write).
#include <string>

#include "compiler/compile_inputs.h"
#include "compiler/compile_sweep.h"

namespace lull::cli {

// Wall seconds of one `lull compile` by phase.
struct CompileSeconds {
  double setup = 0;                 // process start -> reading: options, solver choice
  compiler::InputSeconds inputs;    // read, validate, reduce
  double solve = 0;                 // the sweep: MDPs, solves, policies
  double write = 0;                 // the policy set, written atomically
  double total = 0;                 // process start -> the report
};

std::string compile_report_json(const compiler::SweepResult& result, const std::string& device,
                                const CompileSeconds& seconds);

}  // namespace lull::cli
