#pragma once
// One check for every numeric command-line option: the value must be finite
// and within [lo, hi] (limits from schema/input_limits.h). Throws UsageError
// "--flag: must be in lo..hi (got v)": one line, exit code 2.
#include <string>

namespace lull::cli {

void check_range(const std::string& flag, double value, double lo, double hi);
// The same with lo excluded (durations, rates: > 0).
void check_positive_range(const std::string& flag, double value, double hi);

}  // namespace lull::cli
