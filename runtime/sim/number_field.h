#pragma once
// One number out of a command-line field or a trace file's field, whole and
// finite, or std::invalid_argument("WHAT: 'TEXT' is not a number"). Shared by
// the --trace reader and the worker-event flags.
#include <cmath>
#include <stdexcept>
#include <string>

namespace lull::sim {

inline double parse_number_field(const std::string& s, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v)) throw std::invalid_argument(what + ": '" + s + "' is not a number");
  return v;
}

}  // namespace lull::sim
