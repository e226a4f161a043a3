#pragma once
// simdjson, wrapped for lull's readers of hand-editable JSON (the profile set,
// the RAMSIS artifact): one parser that reads whole files, and conversions
// that follow protobuf's JSON mapping (numbers may be quoted, "NaN" and
// "Infinity" are numbers, integers must be whole). The conversions return
// false instead of throwing so that callers build the field's name only when
// something is wrong: a profile holds millions of samples.
#include <simdjson.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "schema/bounded_file.h"

namespace lull::json {

// "PATH: why": the file cannot be read or is not JSON.
struct JsonFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses whole files, one at a time: the element a call returns stays valid
// until the next call. Reusing one reader for many files reuses its buffers.
class JsonFileReader {
 public:
  // Files are read under `kind`'s size cap (schema/bounded_file.h).
  explicit JsonFileReader(FileKind kind = FileKind::kProfile) : kind_(kind) {}

  // `what` names the content in errors: "PATH: malformed <what>: <why>".
  simdjson::dom::element parse(const std::string& path, const std::string& what);

 private:
  FileKind kind_;
  simdjson::dom::parser parser_;
  simdjson::padded_string text_;
};

// The same, reporting a failure as the caller's own error type (one line,
// "PATH: ...").
template <class Error>
simdjson::dom::element parse_file_or_throw(JsonFileReader& reader, const std::string& path, const std::string& what) {
  try {
    return reader.parse(path, what);
  } catch (const JsonFileError& e) {
    throw Error(e.what());
  }
}

// Number (or a quoted number, "NaN", "Infinity", "-Infinity").
bool to_double(simdjson::dom::element e, double* out);
// A whole number in [0, 2^32) (or one quoted).
bool to_uint32(simdjson::dom::element e, std::uint32_t* out);
bool to_string(simdjson::dom::element e, std::string* out);
bool to_bool(simdjson::dom::element e, bool* out);  // true, false, "true", "false"

// What the element is, for error messages: "a string", "an object", ...
std::string describe(simdjson::dom::element e);

}  // namespace lull::json
