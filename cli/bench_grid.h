#pragma once
// `lull bench compile --grid table2`: the paper's Table 2 grid on one or more
// devices (--device cpu,cuda), printed and optionally written as markdown.
#include <string>

#include "cli/compile_options.h"

namespace lull::cli {

// Returns the exit code: 0 when at least one device ran every cell, 2 otherwise.
int run_bench_grid(const compiler::CompileSpec& spec, const std::string& grid, const std::string& markdown_path,
                   int repeat);

}  // namespace lull::cli
