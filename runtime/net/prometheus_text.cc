#include "runtime/net/prometheus_text.h"

#include <cmath>
#include <cstdio>

namespace lull::net::prom {

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const std::string& name_and_labels, double value) {
  char buf[64];
  if (std::isinf(value))
    std::snprintf(buf, sizeof buf, " %s\n", value > 0 ? "+Inf" : "-Inf");
  else
    std::snprintf(buf, sizeof buf, " %.17g\n", value);
  out += name_and_labels;
  out += buf;
}

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace lull::net::prom
