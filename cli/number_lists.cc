#include "cli/number_lists.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "cli/commands.h"

namespace lull::cli {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

namespace {

double parse_number(const std::string& s, const std::string& flag) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) throw UsageError(flag + ": '" + s + "' is not a number");
  return v;
}

}  // namespace

std::vector<double> parse_number_list(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  for (const auto& item : split_commas(text)) {
    const auto c1 = item.find(':');
    if (c1 == std::string::npos) {
      out.push_back(parse_number(item, flag));
      continue;
    }
    const auto c2 = item.find(':', c1 + 1);
    if (c2 == std::string::npos) throw UsageError(flag + ": range '" + item + "' must be FROM:TO:STEP");
    const double from = parse_number(item.substr(0, c1), flag);
    const double to = parse_number(item.substr(c1 + 1, c2 - c1 - 1), flag);
    const double step = parse_number(item.substr(c2 + 1), flag);
    if (!(step > 0) || to < from) throw UsageError(flag + ": range '" + item + "' needs FROM <= TO and STEP > 0");
    const long count = std::lround(std::floor((to - from) / step + 1e-9));
    if (count > 100000) throw UsageError(flag + ": range '" + item + "' has too many points");
    for (long i = 0; i <= count; ++i) out.push_back(from + static_cast<double>(i) * step);
  }
  if (out.empty()) throw UsageError(flag + ": no values given");
  return out;
}

}  // namespace lull::cli
