// Small JSON reads over protobuf's Value (why: see json_value.h).
#include "runtime/net/json_value.h"

#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lull::net {

bool parse_json(const std::string& text, JsonValue* out) {
  // The request path's bounded pass (json_data_field.h) finds nesting past
  // kMaxJsonDepth before protobuf's parser would spend minutes on it.
  if (read_json_data_field(text).too_deep) return false;
  return google::protobuf::util::JsonStringToMessage(text, out).ok();
}

const JsonValue* json_field(const JsonValue& object, const std::string& name) {
  if (object.kind_case() != JsonValue::kStructValue) return nullptr;
  const auto& fields = object.struct_value().fields();
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

std::string json_string(const JsonValue& object, const std::string& name, const std::string& fallback) {
  const JsonValue* v = json_field(object, name);
  return v && v->kind_case() == JsonValue::kStringValue ? v->string_value() : fallback;
}

double json_number(const JsonValue& object, const std::string& name, double fallback) {
  const JsonValue* v = json_field(object, name);
  return v && v->kind_case() == JsonValue::kNumberValue ? v->number_value() : fallback;
}

bool json_bool(const JsonValue& object, const std::string& name, bool fallback) {
  const JsonValue* v = json_field(object, name);
  return v && v->kind_case() == JsonValue::kBoolValue ? v->bool_value() : fallback;
}

bool is_utf8(const std::string& text) {
  // RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF (a JSON
  // parser refuses those, and with them the whole request).
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t more;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (c < 0x80)
      more = 0;
    else if (c >= 0xc2 && c < 0xe0)
      more = 1;
    else if (c == 0xe0)
      more = 2, lo = 0xa0;
    else if (c == 0xed)
      more = 2, hi = 0x9f;
    else if (c >= 0xe1 && c < 0xf0)
      more = 2;
    else if (c == 0xf0)
      more = 3, lo = 0x90;
    else if (c == 0xf4)
      more = 3, hi = 0x8f;
    else if (c > 0xf0 && c < 0xf4)
      more = 3;
    else
      return false;
    if (text.size() - i - 1 < more) return false;
    for (size_t k = 1; k <= more; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b & 0xc0) != 0x80) return false;
    }
    i += more + 1;
  }
  return true;
}

std::string json_quoted(const std::string& text) {
  std::string out = "\"";
  const bool latin1 = !is_utf8(text);  // then every byte is one character: JSON must be UTF-8
  for (const char c : text) {
    if (latin1 && static_cast<unsigned char>(c) >= 0x80) {
      const unsigned char u = static_cast<unsigned char>(c);
      out += u < 0xc0 ? "\xc2" : "\xc3";
      out += static_cast<char>(0x80 | (u & 0x3f));
    } else if (c == '"' || c == '\\') {
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

std::string json_number_text(double number) {
  if (!std::isfinite(number)) return "null";
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, number);
    if (std::strtod(buf, nullptr) == number) break;
  }
  return buf;
}

std::string json_text(const JsonValue& value) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(value, &out);
  return out;
}

}  // namespace lull::net
