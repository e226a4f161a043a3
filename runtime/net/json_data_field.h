#pragma once
// The string field "data" of a JSON object body ({"data": "<base64>"}, the
// JSON form of a TorchServe prediction request), read by a single bounded
// pass: at most kMaxJsonDepth levels of nesting, linear time in the body, no
// tree built. It replaces a general JSON parser on the request path, which
// took seconds of CPU to reject a 20 KB body of 10,000 nested '['.
#include <optional>
#include <string>
#include <string_view>

namespace lull::net {

inline constexpr int kMaxJsonDepth = 32;

struct JsonDataField {
  bool valid_json = false;          // the body is one well-formed JSON value (within the depth)
  bool is_object = false;           // ... and it is an object
  bool too_deep = false;            // nesting past kMaxJsonDepth (valid_json is false)
  std::optional<std::string> data;  // its top-level "data" when that is a string (unescaped)
};

JsonDataField read_json_data_field(std::string_view body);

}  // namespace lull::net
