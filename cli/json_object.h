#pragma once
// A JSON value whose objects print their keys in the order they were added,
// so a report's bytes depend only on its contents (protobuf's Struct is a map
// whose iteration order changed from run to run).
#include <string>
#include <vector>

namespace lull::cli {

class JsonValue {
 public:
  static JsonValue object() { return JsonValue(kObject); }
  static JsonValue array() { return JsonValue(kArray); }
  JsonValue(double number);                                      // NOLINT: implicit, so add("k", 1.5) reads well
  JsonValue(const std::string& text);                            // NOLINT
  JsonValue(const char* text) : JsonValue(std::string(text)) {}  // NOLINT

  // Object: appends key -> value and returns the stored value (to fill a nested one).
  JsonValue& add(const std::string& key, JsonValue value);
  // Array: appends an item and returns it.
  JsonValue& push(JsonValue value);

  // Two spaces per level; no trailing newline.
  std::string text(int indent = 0) const;

 private:
  enum Kind { kScalar, kObject, kArray };
  explicit JsonValue(Kind kind) : kind_(kind) {}
  Kind kind_ = kScalar;
  std::string scalar_;             // the JSON text of a number or string
  std::vector<std::string> keys_;  // an object's, in order
  std::vector<JsonValue> items_;   // an object's values or an array's items
};

}  // namespace lull::cli
