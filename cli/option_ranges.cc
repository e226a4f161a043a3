// See option_ranges.h.
#include "cli/option_ranges.h"

#include <cctype>
#include <cmath>

#include "cli/commands.h"
#include "schema/number_text.h"

namespace po = boost::program_options;

namespace lull::cli {
namespace {
std::string str(double v) { return number_text(v); }

template <class T>
bool stores(const po::value_semantic* s) {
  return dynamic_cast<const po::typed_value<T>*>(s) || dynamic_cast<const po::typed_value<std::vector<T>>*>(s);
}
}  // namespace

void check_range(const std::string& flag, double value, double lo, double hi) {
  if (!(std::isfinite(value) && value >= lo && value <= hi))
    throw UsageError(flag + ": must be in " + str(lo) + ".." + str(hi) + " (got " + str(value) + ")");
}

void check_positive_range(const std::string& flag, double value, double hi) {
  if (!(std::isfinite(value) && value > 0 && value <= hi))
    throw UsageError(flag + ": must be > 0 and <= " + str(hi) + " (got " + str(value) + ")");
}

std::string unsigned_range_text(std::uintmax_t lo, std::uintmax_t hi) {
  if (hi == std::numeric_limits<std::uintmax_t>::max() || hi == std::numeric_limits<unsigned long>::max() ||
      hi == std::numeric_limits<unsigned>::max() || hi == std::numeric_limits<unsigned short>::max())
    return ">= " + std::to_string(lo);
  return "in " + std::to_string(lo) + ".." + std::to_string(hi);
}

bool unsigned_text_in_range(const std::string& text, std::uintmax_t lo, std::uintmax_t hi) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  if (b == e || e - b > 20) return false;
  std::uintmax_t v = 0;
  for (std::size_t i = b; i < e; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;  // a sign, a point, an exponent
    const std::uintmax_t d = static_cast<std::uintmax_t>(text[i] - '0');
    if (v > (std::numeric_limits<std::uintmax_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  return v >= lo && v <= hi;
}

bool is_unsigned_option(const po::value_semantic* s) {
  return stores<unsigned char>(s) || stores<unsigned short>(s) || stores<unsigned>(s) || stores<unsigned long>(s) ||
         stores<unsigned long long>(s);
}

}  // namespace lull::cli
