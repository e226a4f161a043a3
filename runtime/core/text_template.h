#pragma once
// Filling "{name}" placeholders in the command and archive templates users
// give lull (a worker's command line, a model's archive URL).
#include <string>
#include <utility>
#include <vector>

namespace lull::core {

// `text` with every occurrence of each key (e.g. "{port}") replaced by its value.
std::string fill_template(std::string text, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace lull::core
