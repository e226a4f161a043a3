#pragma once
// A number as error messages print it ("%g": 100, 0.5, 1e+308): one
// formatter for the validators in every layer, so messages read alike.
#include <cstdio>
#include <string>

namespace lull {

inline std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace lull
