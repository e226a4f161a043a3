#pragma once
// Text taken from an input file (a JSON key, a model name, a string value)
// made safe to quote in a one-line error: control characters are written as
// JSON escapes (\n, \t, \u0001), so a name holding a newline cannot split
// the message. Found by the profile reader's fuzz target (docs/testing.md).
#include <cstdio>
#include <string>
#include <string_view>

namespace lull {

inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    }
  }
  return out;
}

}  // namespace lull
