#pragma once
// Reading the small JSON answers of the HTTP APIs lull talks to (TorchServe's
// management API, the Kubernetes API server) as protobuf's generic Value, so
// they need no JSON library beyond the one the schema already links.
#include <google/protobuf/struct.pb.h>

#include <string>

#include "runtime/net/json_data_field.h"

namespace lull::net {

using JsonValue = google::protobuf::Value;

// False when `text` is not JSON, or nests deeper than kMaxJsonDepth
// (json_data_field.h): deeper answers are refused before protobuf's parser
// sees them, whose time and memory grow faster than the depth (a 2 MB body of
// a million brackets ran for minutes and took 900 MB). lull reads nothing
// deeper than ~8.
bool parse_json(const std::string& text, JsonValue* out);
// The member `name` of an object, or nullptr (not an object, or no such member).
const JsonValue* json_field(const JsonValue& object, const std::string& name);
// The member as a string / number / bool; `fallback` when absent or of another kind.
std::string json_string(const JsonValue& object, const std::string& name, const std::string& fallback = "");
double json_number(const JsonValue& object, const std::string& name, double fallback = 0);
bool json_bool(const JsonValue& object, const std::string& name, bool fallback = false);
// `text` as a JSON string literal, quotes included ('"', '\\' and control
// characters escaped; other bytes as they are, unless `text` is not UTF-8:
// then it is read as Latin-1, each byte one character, so the JSON stays UTF-8).
std::string json_quoted(const std::string& text);
// True when `text` is valid UTF-8 (RFC 3629: what a JSON parser takes).
bool is_utf8(const std::string& text);
// A number as JSON: the shortest of %.15g..%.17g that reads back as the
// same double; null for inf and NaN (JSON has neither).
std::string json_number_text(double number);
// `value` as compact JSON text.
std::string json_text(const JsonValue& value);

}  // namespace lull::net
