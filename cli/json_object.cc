#include "cli/json_object.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lull::cli {

namespace {
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

JsonValue::JsonValue(double number) {
  if (!std::isfinite(number)) {
    scalar_ = "null";  // JSON has no inf/nan
    return;
  }
  // The shortest of %.15g..%.17g that reads back as the same double.
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, number);
    if (std::strtod(buf, nullptr) == number) break;
  }
  scalar_ = buf;
}

JsonValue::JsonValue(const std::string& text) : scalar_(quote(text)) {}

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
    if (kind_ == kObject) out += quote(keys_[i]) + ": ";
    out += items_[i].text(indent + 2);
  }
  return out + "\n" + std::string(static_cast<size_t>(indent), ' ') + close;
}

}  // namespace lull::cli
