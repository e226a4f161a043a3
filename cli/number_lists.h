#pragma once
// Parses "2000", "2000,2200" and ranges "200:4000:200" (inclusive), mixed
// with commas. Throws UsageError naming the flag on malformed input.
#include <string>
#include <vector>

namespace lull::cli {

std::vector<double> parse_number_list(const std::string& text, const std::string& flag);
std::vector<std::string> split_commas(const std::string& text);

}  // namespace lull::cli
