// Placeholder filling (why: see text_template.h).
#include "runtime/core/text_template.h"

namespace lull::core {

std::string fill_template(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values)
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

}  // namespace lull::core
