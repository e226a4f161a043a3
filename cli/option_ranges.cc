// See option_ranges.h.
#include "cli/option_ranges.h"

#include <cmath>

#include "cli/commands.h"
#include "schema/number_text.h"

namespace lull::cli {
namespace {
std::string str(double v) { return number_text(v); }
}  // namespace

void check_range(const std::string& flag, double value, double lo, double hi) {
  if (!(std::isfinite(value) && value >= lo && value <= hi))
    throw UsageError(flag + ": must be in " + str(lo) + ".." + str(hi) + " (got " + str(value) + ")");
}

void check_positive_range(const std::string& flag, double value, double hi) {
  if (!(std::isfinite(value) && value > 0 && value <= hi))
    throw UsageError(flag + ": must be > 0 and <= " + str(hi) + " (got " + str(value) + ")");
}

}  // namespace lull::cli
