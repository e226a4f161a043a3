#include "cli/json_object.h"

#include "runtime/net/json_value.h"

namespace lull::cli {

JsonValue::JsonValue(double number) : scalar_(net::json_number_text(number)) {}

JsonValue::JsonValue(const std::string& text) : scalar_(net::json_quoted(text)) {}

JsonValue& JsonValue::add(const std::string& key, JsonValue value) {
  keys_.push_back(key);
  items_.push_back(std::move(value));
  return items_.back();
}

JsonValue& JsonValue::push(JsonValue value) {
  items_.push_back(std::move(value));
  return items_.back();
}

std::string JsonValue::text(int indent) const {
  if (kind_ == kScalar) return scalar_;
  const char open = kind_ == kObject ? '{' : '[', close = kind_ == kObject ? '}' : ']';
  if (items_.empty()) return std::string{open, close};
  const std::string pad(static_cast<size_t>(indent + 2), ' ');
  std::string out(1, open);
  for (size_t i = 0; i < items_.size(); ++i) {
    out += i ? ",\n" : "\n";
    out += pad;
    if (kind_ == kObject) out += net::json_quoted(keys_[i]) + ": ";
    out += items_[i].text(indent + 2);
  }
  return out + "\n" + std::string(static_cast<size_t>(indent), ' ') + close;
}

}  // namespace lull::cli
