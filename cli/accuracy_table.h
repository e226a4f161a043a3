#pragma once
// The `--accuracy FILE` table of `lull profile` and `lull loadgen`: JSON
// {"model": accuracy as a fraction in [0, 1]}; keys starting with '_' are
// comments. One reader, so both commands refuse a percent table alike (the
// artifact's percent table is `--accuracy-percent` in the compile commands).
#include <map>
#include <string>

namespace lull::cli {

// Throws UsageError naming the file (and the model) for anything else.
std::map<std::string, double> read_accuracy_fractions(const std::string& path);

}  // namespace lull::cli
