#include "schema/json_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "schema/bounded_file.h"
#include "schema/one_line.h"

namespace lull::json {
namespace dom = simdjson::dom;

namespace {

// Reads the file straight into simdjson's padded buffer (no second copy).
void load_file(const std::string& path, FileKind kind, simdjson::padded_string& text) {
  try {
    read_bounded_file_into(path, kind, [&](std::size_t n) {
      text = simdjson::padded_string(n);
      return text.data();
    });
  } catch (const FileReadError& e) {
    throw JsonFileError(e.what());
  }
}

// protobuf's JSON mapping accepts a number written as a string.
bool parse_quoted_double(std::string_view s, double* out) {
  if (s == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s == "Infinity") {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "-Infinity") {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
  const std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace

dom::element JsonFileReader::parse(const std::string& path, const std::string& what) {
  load_file(path, kind_, text_);
  dom::element root;
  const auto err = parser_.parse(text_).get(root);
  if (err) throw JsonFileError(path + ": malformed " + what + ": " + simdjson::error_message(err));
  return root;
}

bool to_double(dom::element e, double* out) {
  switch (e.type()) {
    case dom::element_type::DOUBLE:
      *out = e.get_double().value_unsafe();
      return true;
    case dom::element_type::INT64:
      *out = static_cast<double>(e.get_int64().value_unsafe());
      return true;
    case dom::element_type::UINT64:
      *out = static_cast<double>(e.get_uint64().value_unsafe());
      return true;
    case dom::element_type::STRING:
      return parse_quoted_double(e.get_string().value_unsafe(), out);
    default:
      return false;
  }
}

bool to_uint32(dom::element e, std::uint32_t* out) {
  double v = 0;
  switch (e.type()) {
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
      if (!to_double(e, &v)) return false;
      break;
    case dom::element_type::STRING: {
      const auto s = e.get_string().value_unsafe();
      if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
      if (!parse_quoted_double(s, &v)) return false;
      break;
    }
    default:
      return false;
  }
  if (!(v >= 0 && v <= 4294967295.0 && v == std::floor(v))) return false;
  *out = static_cast<std::uint32_t>(v);
  return true;
}

bool to_string(dom::element e, std::string* out) {
  if (e.type() != dom::element_type::STRING) return false;
  *out = std::string(e.get_string().value_unsafe());
  return true;
}

bool to_bool(dom::element e, bool* out) {
  if (e.type() == dom::element_type::STRING) {  // protobuf's mapping accepts these two
    const auto s = e.get_string().value_unsafe();
    if (s != "true" && s != "false") return false;
    *out = s == "true";
    return true;
  }
  if (e.type() != dom::element_type::BOOL) return false;
  *out = e.get_bool().value_unsafe();
  return true;
}

std::string describe(dom::element e) {
  switch (e.type()) {
    case dom::element_type::ARRAY:
      return "a list";
    case dom::element_type::OBJECT:
      return "an object";
    case dom::element_type::STRING: {
      const auto s = e.get_string().value_unsafe();
      return "the string \"" + one_line(s.substr(0, 40)) + (s.size() > 40 ? "...\"" : "\"");
    }
    case dom::element_type::BOOL:
      return e.get_bool().value_unsafe() ? "true" : "false";
    case dom::element_type::NULL_VALUE:
      return "null";
    default:
      return "a number";
  }
}

}  // namespace lull::json
