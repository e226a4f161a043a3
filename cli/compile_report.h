#pragma once
// The compile report: one JSON object with the expectations, sizes and
// per-phase seconds of every policy of a sweep.
#include <string>

#include "compiler/compile_sweep.h"

namespace lull::cli {

std::string compile_report_json(const compiler::SweepResult& result, const std::string& device, double total_seconds);

}  // namespace lull::cli
