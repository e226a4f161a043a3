#include "runtime/session/fleet_metrics.h"

#include <map>
#include <sstream>

namespace lull::session {

namespace {

// Rendered once by the fleet, not per group.
bool process_wide(const std::string& family) { return family == "lull_build_info" || family.rfind("process_", 0) == 0; }

// "# HELP NAME ..." / "# TYPE NAME ...": NAME.
std::string header_family(const std::string& line) {
  const std::size_t start = line.find(' ', 2) + 1;
  return line.substr(start, line.find(' ', start) - start);
}

std::string labelled(const std::string& sample, const std::string& labels) {
  const std::size_t end = sample.find_first_of("{ ");
  if (end == std::string::npos) return sample;
  if (sample[end] == '{')
    return sample.substr(0, end + 1) + labels + (sample[end + 1] == '}' ? "" : ",") + sample.substr(end + 1);
  return sample.substr(0, end) + "{" + labels + "}" + sample.substr(end);
}

}  // namespace

std::string merge_group_metrics(const std::vector<GroupMetrics>& groups) {
  struct Family {
    std::string headers, samples;
  };
  std::vector<std::string> order;
  std::map<std::string, Family> families;
  for (const auto& g : groups) {
    std::istringstream in(g.text);
    std::string line, family;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
        family = header_family(line);
        if (process_wide(family)) continue;
        auto [it, added] = families.try_emplace(family);
        if (added) order.push_back(family);
        // Each header once: from the first group that has it.
        if (it->second.headers.find(line.substr(0, 7)) == std::string::npos) it->second.headers += line + "\n";
        continue;
      }
      if (line[0] == '#') continue;
      if (family.empty() || line.rfind(family, 0) != 0) family = line.substr(0, line.find_first_of("{ "));
      if (process_wide(family)) continue;
      auto [it, added] = families.try_emplace(family);
      if (added) order.push_back(family);
      it->second.samples += labelled(line, g.labels) + "\n";
    }
  }
  std::string out;
  for (const auto& name : order) out += families[name].headers + families[name].samples;
  return out;
}

}  // namespace lull::session
