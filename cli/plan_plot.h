#pragma once
// `lull plan --plot PLAN.png`: draws the plan with matplotlib (Debian's
// python3-matplotlib; lull has no plotting library of its own and the
// experiments already plot this way). Left: load and workers over time (a
// trace) or the capacity curve with the planned point (a load); right: the
// expected accuracy against workers (the capacity table).
#include <string>

namespace lull::cli {

// Runs python3 on the plan JSON; the PNG is written atomically. Throws
// std::runtime_error with python's last line when it fails (e.g. no matplotlib).
void write_plan_plot(const std::string& plan_json_text, const std::string& png_path);

}  // namespace lull::cli
