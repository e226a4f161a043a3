#pragma once
// Writing Prometheus' text exposition format (0.0.4): the HELP/TYPE header of
// a family, one sample line, a label value escaped. Shared by every piece of
// lull's /metrics so each renders its families the same way.
#include <string>

namespace lull::net::prom {

void family(std::string& out, const char* name, const char* type, const char* help);
void sample(std::string& out, const std::string& name_and_labels, double value);
std::string escape(const std::string& label_value);

}  // namespace lull::net::prom
