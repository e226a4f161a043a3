// The v2 front end's request checks and answers (what and why: v2_front_codec.h).
#include "runtime/frontend/v2_front_codec.h"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "runtime/net/base64.h"
#include "runtime/net/json_data_field.h"
#include "runtime/net/json_value.h"
#include "schema/one_line.h"

namespace lull::frontend {

using net::base64_decode;
using net::is_utf8;
using net::json_field;
using net::json_number_text;
using net::json_quoted;
using net::json_string;
using net::json_text;
using net::JsonDataField;
using net::JsonValue;
using net::kMaxJsonDepth;
using net::parse_json;
using net::read_json_data_field;

namespace {

namespace dom = simdjson::dom;

// The protocol's tensor datatypes, and what an element of each must be.
// Integers are checked exactly in 64-bit arithmetic: [lo, hi], both
// inclusive; a JSON number written with a fraction or exponent (1.0, 2e3)
// is an integer when it is whole and inside [dlo, dend), the same range as
// doubles (powers of two, so exact).
enum class Element { kBool, kInteger, kFloat, kString };
struct Datatype {
  const char* name;
  Element element;
  std::int64_t lo;   // integers: the least value
  std::uint64_t hi;  // integers: the greatest value
  double dlo, dend;  // integers: [dlo, dend); floats: [-dend, dend]
};
constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr Datatype kDatatypes[] = {
    {"BOOL", Element::kBool, 0, 0, 0, 0},
    {"UINT8", Element::kInteger, 0, 255, 0, 256},
    {"UINT16", Element::kInteger, 0, 65535, 0, 65536},
    {"UINT32", Element::kInteger, 0, 4294967295u, 0, 4294967296.0},
    {"UINT64", Element::kInteger, 0, std::numeric_limits<std::uint64_t>::max(), 0, 2 * kTwoTo63},
    {"INT8", Element::kInteger, -128, 127, -128, 128},
    {"INT16", Element::kInteger, -32768, 32767, -32768, 32768},
    {"INT32", Element::kInteger, -2147483648LL, 2147483647, -2147483648.0, 2147483648.0},
    {"INT64", Element::kInteger, kInt64Min, 9223372036854775807u, -kTwoTo63, kTwoTo63},
    {"FP16", Element::kFloat, 0, 0, 0, 65504},
    {"BF16", Element::kFloat, 0, 0, 0, 3.3895313892515355e38},
    {"FP32", Element::kFloat, 0, 0, 0, 3.4028234663852886e38},
    {"FP64", Element::kFloat, 0, 0, 0, 1.7976931348623157e308},
    {"BYTES", Element::kString, 0, 0, 0, 0},
};
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

const Datatype* find_datatype(std::string_view name) {
  for (const auto& d : kDatatypes)
    if (name == d.name) return &d;
  return nullptr;
}

// One tensor element, read from the JSON or from the binary part: 16 bytes,
// its string a view into the parser's buffer or the body (valid while the
// request is decoded).
struct Elem {
  enum Kind : std::uint8_t { kBool, kInt, kUint, kDouble, kString } kind = kBool;
  std::uint32_t len = 0;  // kString
  union {
    bool b;
    std::int64_t i;
    std::uint64_t u;
    double d;
    const char* s;
  };
  Elem() : i(0) {}
  std::string_view str() const { return {s, len}; }
};

bool int_fits(std::int64_t v, const Datatype& d) {
  return v >= d.lo && (v < 0 || static_cast<std::uint64_t>(v) <= d.hi);
}

// The element `e` as a `d` (false when it is not one).
bool element_of(dom::element e, const Datatype& d, Elem* out) {
  const auto type = e.type();
  switch (d.element) {
    case Element::kBool:
      if (type != dom::element_type::BOOL) return false;
      out->kind = Elem::kBool;
      out->b = e.get_bool().value_unsafe();
      return true;
    case Element::kString: {
      if (type != dom::element_type::STRING) return false;
      const std::string_view s = e.get_string().value_unsafe();
      if (s.size() > std::numeric_limits<std::uint32_t>::max()) return false;
      out->kind = Elem::kString;
      out->s = s.data();
      out->len = static_cast<std::uint32_t>(s.size());
      return true;
    }
    case Element::kInteger:
      if (type == dom::element_type::INT64) {
        out->kind = Elem::kInt;
        out->i = e.get_int64().value_unsafe();
        return int_fits(out->i, d);
      }
      if (type == dom::element_type::UINT64) {  // past INT64's range
        out->kind = Elem::kUint;
        out->u = e.get_uint64().value_unsafe();
        return out->u <= d.hi;
      }
      if (type == dom::element_type::DOUBLE) {
        const double v = e.get_double().value_unsafe();
        if (v != std::floor(v) || !(v >= d.dlo && v < d.dend)) return false;
        if (v < kTwoTo63) {
          out->kind = Elem::kInt;
          out->i = static_cast<std::int64_t>(v);
        } else {
          out->kind = Elem::kUint;
          out->u = static_cast<std::uint64_t>(v);
        }
        return true;
      }
      return false;
    case Element::kFloat: {
      double v;
      if (type == dom::element_type::INT64) {
        out->kind = Elem::kInt;
        out->i = e.get_int64().value_unsafe();
        v = static_cast<double>(out->i);
      } else if (type == dom::element_type::UINT64) {
        out->kind = Elem::kUint;
        out->u = e.get_uint64().value_unsafe();
        v = static_cast<double>(out->u);
      } else if (type == dom::element_type::DOUBLE) {
        out->kind = Elem::kDouble;
        out->d = v = e.get_double().value_unsafe();
      } else {
        return false;
      }
      return v >= -d.dend && v <= d.dend;
    }
  }
  return false;
}

// `s` as a JSON string literal (json_value.h's json_quoted, without a copy).
void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

// A tensor element as JSON text: integers exactly, doubles in their
// shortest form that reads back the same (std::to_chars; no locale, no
// printf per element: a tensor may have millions).
void append_element(std::string& out, const Elem& e) {
  char buf[32];
  std::to_chars_result r{buf, std::errc()};
  switch (e.kind) {
    case Elem::kBool:
      out += e.b ? "true" : "false";
      return;
    case Elem::kString:
      return append_quoted(out, e.str());
    case Elem::kInt:
      r = std::to_chars(buf, buf + sizeof buf, e.i);
      break;
    case Elem::kUint:
      r = std::to_chars(buf, buf + sizeof buf, e.u);
      break;
    case Elem::kDouble:
      r = std::to_chars(buf, buf + sizeof buf, e.d);
      break;
  }
  out.append(buf, r.ptr);
}

std::string text_of(dom::element e) { return simdjson::minify(e); }

// Names and values quoted from the request may hold control characters:
// written as escapes, so the error stays one line.
bool fail(std::string* error, const std::string& message) {
  *error = one_line(message);
  return false;
}

// The element as an array (its type checked by the caller). A named value:
// iterating over a temporary simdjson_result's value would dangle.
dom::array array_of(dom::element e) {
  dom::array a;
  if (e.get_array().get(a)) {
  }  // an empty array
  return a;
}

// A member of an object; false when absent.
bool member(dom::object o, std::string_view key, dom::element* out) { return !o.at_key(key).get(*out); }

// One input, checked: what the rows are cut from.
struct CheckedInput {
  std::string_view name;
  std::string label;  // "inputs[i] (name)"
  const Datatype* datatype = nullptr;
  std::vector<std::int64_t> shape;
  std::string parameters;      // its parameters as JSON (binary_data_size left out), or ""
  bool base64 = false;         // parameters.content_type is "base64"
  bool binary = false;         // its data came from the binary part
  std::vector<Elem> elements;  // row-major
};

// Counts the elements of `data` (nested lists flattened, row-major) and
// checks each against the datatype; the first that does not fit is named.
// Elements past `keep` are counted, not kept (the count is then wrong
// anyway). Depth is bounded by the parser (kMaxJsonDepth).
bool count_elements(dom::element data, const Datatype& d, std::int64_t keep, std::int64_t* count,
                    std::vector<Elem>* elements, std::string* bad) {
  if (data.type() == dom::element_type::ARRAY) {
    for (dom::element e : array_of(data))
      if (!count_elements(e, d, keep, count, elements, bad)) return false;
    return true;
  }
  Elem x;
  if (!element_of(data, d, &x)) {
    *bad = "element " + std::to_string(*count) + " (" + text_of(data) + ") is not " +
           (d.element == Element::kBool      ? std::string("a boolean")
            : d.element == Element::kString  ? std::string("a string")
            : d.element == Element::kInteger ? std::string("an integer in range of ") + d.name
                                             : std::string("a number in range of ") + d.name);
    return false;
  }
  if (*count < keep) elements->push_back(x);
  ++*count;
  return true;
}

double half_to_double(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double v;
  if (exponent == 0)
    v = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    v = mantissa ? std::nan("") : INFINITY;
  else
    v = std::ldexp(mantissa + 1024, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

// bfloat16 is the high half of an FP32.
double bfloat16_to_double(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <class T>
T read_le(const char* p) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the binary tensor extension is little-endian");
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Bytes per element of a datatype's binary form (the binary tensor extension); 0 for BYTES.
size_t binary_element_size(std::string_view datatype) {
  if (datatype == "BOOL" || datatype == "UINT8" || datatype == "INT8") return 1;
  if (datatype == "UINT16" || datatype == "INT16" || datatype == "FP16" || datatype == "BF16") return 2;
  if (datatype == "UINT32" || datatype == "INT32" || datatype == "FP32") return 4;
  return 8;  // UINT64, INT64, FP64
}

// One input's binary tensor as its elements.
bool binary_data(const std::string& label, const Datatype& d, std::string_view raw, std::vector<Elem>* out,
                 std::string* error) {
  const std::string_view datatype = d.name;
  if (d.element == Element::kString) {
    size_t at = 0;
    while (at < raw.size()) {
      if (raw.size() - at < 4)
        return fail(error,
                    label + ": binary BYTES element " + std::to_string(out->size()) + " has a truncated 4-byte length");
      const auto n = read_le<std::uint32_t>(raw.data() + at);
      at += 4;
      if (n > raw.size() - at)
        return fail(error, label + ": binary BYTES element " + std::to_string(out->size()) + " of " +
                               std::to_string(n) + " bytes runs past its binary_data_size");
      Elem e;
      e.kind = Elem::kString;
      e.s = raw.data() + at;
      e.len = n;
      out->push_back(e);
      at += n;
    }
    return true;
  }
  const size_t size = binary_element_size(datatype);
  if (raw.size() % size != 0)
    return fail(error, label + ": binary_data_size " + std::to_string(raw.size()) + " is not a whole number of " +
                           d.name + " elements (" + std::to_string(size) + " bytes each)");
  out->reserve(raw.size() / size);
  for (size_t at = 0; at < raw.size(); at += size) {
    const char* p = raw.data() + at;
    Elem e;
    e.kind = Elem::kInt;
    if (datatype == "BOOL") {
      e.kind = Elem::kBool;
      e.b = *p != 0;
    } else if (datatype == "UINT8") {
      e.i = read_le<std::uint8_t>(p);
    } else if (datatype == "INT8") {
      e.i = read_le<std::int8_t>(p);
    } else if (datatype == "UINT16") {
      e.i = read_le<std::uint16_t>(p);
    } else if (datatype == "INT16") {
      e.i = read_le<std::int16_t>(p);
    } else if (datatype == "UINT32") {
      e.i = read_le<std::uint32_t>(p);
    } else if (datatype == "INT32") {
      e.i = read_le<std::int32_t>(p);
    } else if (datatype == "INT64") {
      e.i = read_le<std::int64_t>(p);
    } else if (datatype == "UINT64") {
      e.kind = Elem::kUint;
      e.u = read_le<std::uint64_t>(p);
    } else {
      e.kind = Elem::kDouble;
      e.d = datatype == "FP16"   ? half_to_double(read_le<std::uint16_t>(p))
            : datatype == "BF16" ? bfloat16_to_double(read_le<std::uint16_t>(p))
            : datatype == "FP32" ? static_cast<double>(read_le<float>(p))
                                 : read_le<double>(p);
      if (!std::isfinite(e.d))
        return fail(error, label + ": binary element " + std::to_string(at / size) + " is not a finite number");
    }
    out->push_back(e);
  }
  return true;
}

// An object's members as JSON, `skip` left out ("" when none is left).
std::string object_text(dom::object o, std::string_view skip) {
  std::string s;
  for (dom::key_value_pair kv : o) {
    if (kv.key == skip) continue;
    s += s.empty() ? '{' : ',';
    append_quoted(s, kv.key);
    s += ':';
    s += simdjson::minify(kv.value);
  }
  return s.empty() ? s : s + '}';
}

// Checks one input; `where` is "inputs[i]". `binary`/`at`: the body's
// binary part and how much of it earlier inputs took (the extension).
bool check_input(dom::element in, const std::string& where, bool extension, std::string_view binary, size_t* at,
                 std::unordered_set<std::string_view>* names, CheckedInput* out, std::string* error) {
  if (in.type() != dom::element_type::OBJECT) return fail(error, where + ": not an object");
  const dom::object o = in.get_object().value_unsafe();
  dom::element name, datatype, shape, params, data;
  if (!member(o, "name", &name) || name.type() != dom::element_type::STRING || name.get_string().value_unsafe().empty())
    return fail(error, where + ".name: missing or not a non-empty string");
  out->name = name.get_string().value_unsafe();
  const std::string label = where + " (" + std::string(out->name) + ")";
  if (!names->insert(out->name).second) return fail(error, label + ": a second input of this name");
  if (!member(o, "datatype", &datatype) || datatype.type() != dom::element_type::STRING)
    return fail(error, label + ".datatype: missing or not a string");
  const std::string_view datatype_name = datatype.get_string().value_unsafe();
  const Datatype* d = find_datatype(datatype_name);
  if (!d)
    return fail(error,
                label + ".datatype: '" + std::string(datatype_name) +
                    "' is not one of the protocol's (BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64, BYTES)");
  if (!member(o, "shape", &shape) || shape.type() != dom::element_type::ARRAY)
    return fail(error, label + ".shape: missing or not a list");
  // The element count in checked arithmetic: every dimension is an exact
  // integer in [0, kMaxElements], and a product past kMaxElements is
  // refused before it can overflow, unless a zero dimension makes it empty.
  std::int64_t expected = 1;
  bool too_large = false, empty = false;
  for (dom::element dim : array_of(shape)) {
    std::int64_t n = -1;
    if (dim.type() == dom::element_type::INT64)
      n = dim.get_int64().value_unsafe();
    else if (dim.type() == dom::element_type::UINT64)
      n = kMaxElements + 1;
    else if (dim.type() == dom::element_type::DOUBLE) {
      const double v = dim.get_double().value_unsafe();
      if (v >= 0 && v == std::floor(v)) n = v > static_cast<double>(kMaxElements) ? kMaxElements + 1 : std::int64_t(v);
    }
    if (n < 0 || n > kMaxElements)
      return fail(error, label + ".shape: " + text_of(shape) + " holds a dimension that is not a count");
    out->shape.push_back(n);
    empty = empty || n == 0;
    if (!too_large) too_large = __builtin_mul_overflow(expected, n, &expected) || expected > kMaxElements;
  }
  if (empty)
    expected = 0;
  else if (too_large)
    return fail(error, label + ".shape: " + text_of(shape) + " is too large");
  std::int64_t binary_size = -1;  // the extension: this input's bytes of the binary part
  if (member(o, "parameters", &params)) {
    if (params.type() != dom::element_type::OBJECT) return fail(error, label + ".parameters: not an object");
    const dom::object p = params.get_object().value_unsafe();
    dom::element size, content_type;
    if (member(p, "binary_data_size", &size)) {
      if (!extension)
        return fail(error, label +
                               ": binary_data_size without the Inference-Header-Content-Length header "
                               "(the binary tensor extension: the header gives the length of the JSON part)");
      if (size.type() == dom::element_type::INT64 && size.get_int64().value_unsafe() >= 0)
        binary_size = size.get_int64().value_unsafe();
      else if (size.type() == dom::element_type::UINT64)
        binary_size = std::numeric_limits<std::int64_t>::max();
      else
        return fail(error, label + ".parameters.binary_data_size: not a count of bytes");
    }
    out->base64 = member(p, "content_type", &content_type) && content_type.type() == dom::element_type::STRING &&
                  content_type.get_string().value_unsafe() == "base64";
    out->parameters = object_text(p, binary_size >= 0 ? "binary_data_size" : "");
  }
  std::int64_t count = 0;
  if (binary_size >= 0) {
    const size_t left = binary.size() - *at;
    if (static_cast<std::uint64_t>(binary_size) > left)
      return fail(error, label + ": binary_data_size " + std::to_string(binary_size) +
                             " runs past the body's binary part (" + std::to_string(left) + " bytes left)");
    if (member(o, "data", &data)) return fail(error, label + ": both \"data\" and binary_data_size");
    if (!binary_data(label, *d, binary.substr(*at, static_cast<size_t>(binary_size)), &out->elements, error))
      return false;
    *at += static_cast<size_t>(binary_size);
    out->binary = true;
    count = static_cast<std::int64_t>(out->elements.size());
  } else {
    if (!member(o, "data", &data) || data.type() != dom::element_type::ARRAY)
      return fail(error, label + ".data: missing or not a list");
    std::string bad;
    out->elements.reserve(static_cast<size_t>(std::min<std::int64_t>(expected, 1 << 16)));
    if (!count_elements(data, *d, expected, &count, &out->elements, &bad)) return fail(error, label + ".data: " + bad);
  }
  if (count != expected)
    return fail(error, label + ": shape " + text_of(shape) + " holds " + std::to_string(expected) +
                           " elements but data has " + std::to_string(count));
  out->label = label;
  out->datatype = d;
  return true;
}

// Row r of the inputs as one tensor query's JSON (v2_front_codec.h).
std::string row_json(const std::vector<CheckedInput>& inputs, std::int64_t rows, std::int64_t r) {
  std::string s = "{\"inputs\":[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CheckedInput& c = inputs[i];
    if (i) s += ',';
    s += "{\"name\":";
    append_quoted(s, c.name);
    s += ",\"datatype\":\"";
    s += c.datatype->name;
    s += "\",\"shape\":[1";
    for (size_t d = 1; d < c.shape.size(); ++d) s += "," + std::to_string(c.shape[d]);
    s += "]";
    if (!c.parameters.empty()) s += ",\"parameters\":" + c.parameters;
    s += ",\"data\":[";
    const auto per = static_cast<std::int64_t>(c.elements.size()) / rows;
    for (std::int64_t k = 0; k < per; ++k) {
      if (k) s += ',';
      append_element(s, c.elements[static_cast<size_t>(r * per + k)]);
    }
    s += "]}";
  }
  return s + "]}";
}

// A prediction that is already v2 outputs: {"outputs": [...]} and nothing else.
bool v2_outputs_of(const std::string& prediction, std::string* outputs) {
  const auto first = prediction.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || prediction[first] != '{' || prediction.find("\"outputs\"") == std::string::npos)
    return false;
  JsonValue v;
  if (!parse_json(prediction, &v) || v.kind_case() != JsonValue::kStructValue || v.struct_value().fields_size() != 1)
    return false;
  const JsonValue* list = json_field(v, "outputs");
  if (!list || list->kind_case() != JsonValue::kListValue) return false;
  // Its one member's value, as the backend wrote it (a re-rendered object
  // would lose its key order).
  const auto colon = prediction.find(':', prediction.find("\"outputs\""));
  const auto end = prediction.find_last_of('}');
  const auto from = prediction.find_first_not_of(" \t\r\n", colon + 1);
  const auto to = prediction.find_last_not_of(" \t\r\n", end - 1);
  *outputs = prediction.substr(from, to + 1 - from);
  return true;
}

// One parser per thread, reused: its buffers grow to the largest body the
// thread has decoded (bounded by the front end's body limit) instead of
// being allocated per request. Nesting is bounded as by json_data_field.h.
dom::parser& thread_parser() {
  thread_local dom::parser parser;
  thread_local bool ready = false;
  if (!ready) {
    ready = true;
    if (parser.allocate(64 * 1024, kMaxJsonDepth + 1)) {
    }  // on failure, parse() allocates (and reports MEMALLOC)
  }
  return parser;
}

bool parse_v2_json_request(std::string_view body, std::string_view binary, bool extension, V2InferRequest* out,
                           std::string* error) {
  dom::parser& parser = thread_parser();
  dom::element root;
  if (const auto err = parser.parse(body.data(), body.size(), true).get(root)) {
    // Why it is refused: the bounded one-pass check (json_data_field.h) tells
    // nesting from malformed text; simdjson alone refuses numbers past 64 bits.
    const JsonDataField scan = read_json_data_field(body);
    if (err == simdjson::DEPTH_ERROR || scan.too_deep)
      return fail(error, "JSON body nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (err == simdjson::MEMALLOC || err == simdjson::CAPACITY)
      return fail(error, "the body is too large to decode here");
    if (scan.valid_json && err == simdjson::NUMBER_ERROR)
      return fail(error, "the body holds a number that is neither a 64-bit integer nor a finite double");
    if (!extension && body.find("binary_data_size") != std::string::npos)
      return fail(error,
                  "body is not valid JSON: binary tensors need the Inference-Header-Content-Length header "
                  "(the length of the JSON part)");
    return fail(error, extension ? "the body's JSON part (Inference-Header-Content-Length) is not valid JSON"
                                 : "body is not valid JSON");
  }
  if (root.type() != dom::element_type::OBJECT) return fail(error, "body is not a JSON object (an inference request)");
  const dom::object doc = root.get_object().value_unsafe();
  dom::element id, params, outputs, inputs;
  if (member(doc, "id", &id)) {
    if (id.type() != dom::element_type::STRING) return fail(error, "id: not a string");
    out->id = std::string(id.get_string().value_unsafe());
    out->has_id = true;
  }
  if (member(doc, "parameters", &params) && params.type() != dom::element_type::OBJECT)
    return fail(error, "parameters: not an object");
  if (member(doc, "outputs", &outputs)) {
    if (outputs.type() != dom::element_type::ARRAY) return fail(error, "outputs: not a list");
    int i = 0;
    for (dom::element o : array_of(outputs)) {
      dom::element name;
      if (o.type() != dom::element_type::OBJECT || !member(o.get_object().value_unsafe(), "name", &name) ||
          name.type() != dom::element_type::STRING || name.get_string().value_unsafe().empty())
        return fail(error, "outputs[" + std::to_string(i) + "]: not an object with a string \"name\"");
      out->outputs.push_back(std::string(name.get_string().value_unsafe()));
      ++i;
    }
  }
  if (!member(doc, "inputs", &inputs) || inputs.type() != dom::element_type::ARRAY || array_of(inputs).size() == 0) {
    if (extension && !binary.empty() && inputs.type() != dom::element_type::ARRAY)
      return fail(error, "the body holds " + std::to_string(binary.size()) +
                             " bytes past the inputs' binary_data_size (Inference-Header-Content-Length)");
    return fail(error, "inputs: missing or empty (the request needs at least one input tensor)");
  }
  std::unordered_set<std::string_view> names;
  std::vector<CheckedInput> checked;
  size_t at = 0;  // of the binary part, taken by the inputs so far
  for (dom::element in : array_of(inputs)) {
    checked.emplace_back();
    if (!check_input(in, "inputs[" + std::to_string(checked.size() - 1) + "]", extension, binary, &at, &names,
                     &checked.back(), error))
      return false;
  }
  if (at != binary.size())
    return fail(error, "the body holds " + std::to_string(binary.size() - at) +
                           " bytes past the inputs' binary_data_size (Inference-Header-Content-Length)");
  // The batch: the leading dimension every input shares.
  const std::string accepted =
      "; lull takes each input as [B, ...] with the same B, row i of every input being query i";
  for (const CheckedInput& c : checked)
    if (c.shape.empty()) return fail(error, c.label + ": shape [] (a scalar) has no batch dimension" + accepted);
  const std::int64_t rows = checked[0].shape[0];
  for (const CheckedInput& c : checked)
    if (c.shape[0] != rows)
      return fail(error, c.label + ": leading dimension " + std::to_string(c.shape[0]) + " where " + checked[0].label +
                             " has " + std::to_string(rows) + accepted);
  if (rows == 0) return fail(error, "inputs: the leading dimension is 0, a batch of no query" + accepted);
  if (rows > kMaxV2BatchRows)
    return fail(error, "inputs: a batch of " + std::to_string(rows) + " rows; at most " +
                           std::to_string(kMaxV2BatchRows) + " per request");
  out->queries.clear();
  const CheckedInput& head = checked[0];
  if (checked.size() == 1 && head.datatype->element == Element::kString &&
      static_cast<std::int64_t>(head.elements.size()) == rows) {
    // One BYTES element per row: each row's bytes are its query.
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::string_view element = head.elements[static_cast<size_t>(r)].str();
      const std::string row = rows > 1 ? " (row " + std::to_string(r) + ")" : "";
      std::string bytes;
      if (head.base64) {
        auto decoded = base64_decode(std::string(element));
        if (!decoded) return fail(error, head.label + ".data: not base64 (content_type base64)" + row);
        bytes = std::move(*decoded);
      } else {
        bytes = std::string(element);
      }
      if (bytes.empty()) return fail(error, head.label + ".data: the element is empty" + row);
      out->queries.push_back(std::move(bytes));
    }
    return true;
  }
  // JSON strings are UTF-8 (the parser checks); binary ones may not be.
  for (const CheckedInput& c : checked)
    if (c.datatype->element == Element::kString && c.binary)
      for (const Elem& e : c.elements)
        if (!is_utf8(std::string(e.str())))
          return fail(error, c.label +
                                 ": a BYTES element that is not UTF-8 can only be a row's one element "
                                 "(shape [B] or [B, 1], with no other input): it is then the query's bytes");
  for (std::int64_t r = 0; r < rows; ++r) out->queries.push_back(row_json(checked, rows, r));
  return true;
}

}  // namespace

bool parse_v2_infer_request(const std::string& body, V2InferRequest* out, std::string* error,
                            const std::string& inference_header_length) {
  if (!inference_header_length.empty()) {
    // The binary tensor extension: the JSON part, then raw tensors.
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(inference_header_length.c_str(), &end, 10);
    if (errno || !end || *end || inference_header_length[0] == '-' || n > body.size())
      return fail(error, "Inference-Header-Content-Length: '" + inference_header_length +
                             "' is not a length within the body's " + std::to_string(body.size()) + " bytes");
    const std::string_view all(body);
    return parse_v2_json_request(all.substr(0, n), all.substr(n), true, out, error);
  }
  return parse_v2_json_request(body, {}, false, out, error);
}

std::string v2_infer_response(const std::string& model, const std::string& task, const V2InferRequest& request,
                              const std::string& prediction) {
  std::string s = "{\"model_name\":" + json_quoted(model);
  if (request.has_id) s += ",\"id\":" + json_quoted(request.id);
  s += ",\"parameters\":{\"lull_task\":" + json_quoted(task) + "},\"outputs\":";
  std::string outputs;
  if (v2_outputs_of(prediction, &outputs))
    s += outputs;
  else
    s += "[{\"name\":\"output\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[" + json_quoted(prediction) + "]}]";
  return s + "}";
}

namespace {

bool is_object(const JsonValue* v) { return v && v->kind_case() == JsonValue::kStructValue; }
bool is_list(const JsonValue* v) { return v && v->kind_case() == JsonValue::kListValue; }

// An output element as JSON text (scalars by hand: protobuf's writer costs
// microseconds per call, and a tensor has thousands of elements).
std::string element_text(const JsonValue& e) {
  switch (e.kind_case()) {
    case JsonValue::kNumberValue:
      return json_number_text(e.number_value());
    case JsonValue::kStringValue:
      return json_quoted(e.string_value());
    case JsonValue::kBoolValue:
      return e.bool_value() ? "true" : "false";
    default:
      return json_text(e);
  }
}

// One row's output, read back from a v2 prediction.
struct RowOutput {
  std::string name, datatype, parameters;  // parameters: JSON text or ""
  std::vector<std::int64_t> shape;
  std::vector<std::string> data;  // element texts, row-major
};

void flatten_texts(const JsonValue& v, std::vector<std::string>* out, int depth) {
  if (v.kind_case() == JsonValue::kListValue && depth < 64) {
    for (const auto& e : v.list_value().values()) flatten_texts(e, out, depth + 1);
  } else {
    out->push_back(element_text(v));
  }
}

bool read_row_outputs(const std::string& outputs_text, std::vector<RowOutput>* out) {
  JsonValue v;
  if (!parse_json(outputs_text, &v) || !is_list(&v)) return false;
  for (const auto& o : v.list_value().values()) {
    RowOutput r;
    r.name = json_string(o, "name");
    r.datatype = json_string(o, "datatype");
    const JsonValue* shape = json_field(o, "shape");
    const JsonValue* data = json_field(o, "data");
    if (!is_list(shape) || shape->list_value().values_size() == 0 || !is_list(data)) return false;
    for (const auto& d : shape->list_value().values()) r.shape.push_back(static_cast<std::int64_t>(d.number_value()));
    if (const JsonValue* p = json_field(o, "parameters"); p && is_object(p)) r.parameters = json_text(*p);
    flatten_texts(*data, &r.data, 0);
    out->push_back(std::move(r));
  }
  return true;
}

std::string shape_text(const std::vector<std::int64_t>& shape, size_t from) {
  std::string s;
  for (size_t d = from; d < shape.size(); ++d) s += (s.empty() ? "" : ",") + std::to_string(shape[d]);
  return "[" + s + "]";
}

}  // namespace

bool v2_infer_batch_response(const std::vector<std::string>& models, const std::string& task,
                             const V2InferRequest& request, const std::vector<std::string>& predictions,
                             std::string* body, std::string* error) {
  std::vector<std::vector<RowOutput>> rows(predictions.size());
  size_t tensor_rows = 0;
  for (size_t r = 0; r < predictions.size(); ++r) {
    std::string outputs;
    if (v2_outputs_of(predictions[r], &outputs) && read_row_outputs(outputs, &rows[r])) ++tensor_rows;
  }
  std::string outputs = "[";
  if (tensor_rows == 0) {
    // Plain predictions: one BYTES element per row.
    outputs +=
        "{\"name\":\"output\",\"datatype\":\"BYTES\",\"shape\":[" + std::to_string(predictions.size()) + "],\"data\":[";
    for (size_t r = 0; r < predictions.size(); ++r) outputs += (r ? "," : "") + json_quoted(predictions[r]);
    outputs += "]}";
  } else {
    if (tensor_rows != predictions.size()) {
      *error = "the rows' answers cannot be stacked: some are tensors, some not (the models that served them differ)";
      return false;
    }
    const std::vector<RowOutput>& head = rows[0];
    for (size_t k = 0; k < head.size(); ++k) {
      std::int64_t total = 0;
      std::string data;
      for (size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].size() != head.size() || rows[r][k].name != head[k].name ||
            rows[r][k].datatype != head[k].datatype ||
            shape_text(rows[r][k].shape, 1) != shape_text(head[k].shape, 1)) {
          *error = "the rows' answers cannot be stacked: row " + std::to_string(r) + " (" + models[r] +
                   ") answered outputs unlike row 0's (" + models[0] + ": " + head[k].name + " " + head[k].datatype +
                   " " + shape_text(head[k].shape, 0) + ")";
          return false;
        }
        total += rows[r][k].shape[0];
        for (const auto& e : rows[r][k].data) {
          if (!data.empty()) data += ',';
          data += e;
        }
      }
      std::vector<std::int64_t> shape = head[k].shape;
      shape[0] = total;
      if (k) outputs += ',';
      outputs += "{\"name\":" + json_quoted(head[k].name) + ",\"datatype\":" + json_quoted(head[k].datatype) +
                 ",\"shape\":" + shape_text(shape, 0);
      if (!head[k].parameters.empty()) outputs += ",\"parameters\":" + head[k].parameters;
      outputs += ",\"data\":[" + data + "]}";
    }
  }
  outputs += "]";
  std::string s = "{\"model_name\":" + json_quoted(models.empty() ? "" : models[0]);
  if (request.has_id) s += ",\"id\":" + json_quoted(request.id);
  s += ",\"parameters\":{\"lull_task\":" + json_quoted(task);
  bool same = true;
  for (const auto& m : models) same = same && m == models[0];
  if (!same) {
    s += ",\"lull_models\":[";
    for (size_t r = 0; r < models.size(); ++r) s += (r ? "," : "") + json_quoted(models[r]);
    s += "]";
  }
  *body = s + "},\"outputs\":" + outputs + "}";
  return true;
}

bool select_v2_outputs(const V2InferRequest& request, std::string* body, std::string* error) {
  if (request.outputs.empty()) return true;
  JsonValue doc;
  const JsonValue* outputs = nullptr;
  if (!parse_json(*body, &doc) || !is_list(outputs = json_field(doc, "outputs")))
    return fail(error, "the model's answer has no outputs list to pick the requested outputs from");
  std::string answered;
  for (const auto& o : outputs->list_value().values())
    answered += (answered.empty() ? "" : ", ") + json_string(o, "name");
  JsonValue kept;
  kept.mutable_list_value();
  for (const std::string& name : request.outputs) {
    const JsonValue* found = nullptr;
    for (const auto& o : outputs->list_value().values())
      if (json_string(o, "name") == name) found = &o;
    if (!found)
      return fail(error, "outputs: '" + name.substr(0, 200) + "' is not an output of model " +
                             json_string(doc, "model_name") + "; it answers: " + answered);
    *kept.mutable_list_value()->add_values() = *found;
  }
  (*doc.mutable_struct_value()->mutable_fields())["outputs"] = std::move(kept);
  *body = json_text(doc);
  return true;
}

std::string v2_error_body(const std::string& message) { return "{\"error\":" + json_quoted(message) + "}"; }

std::string torchserve_error_message(const std::string& body) {
  JsonValue v;
  if (parse_json(body, &v)) {
    const std::string message = json_string(v, "message");
    if (!message.empty()) return message;
  }
  return body;
}

}  // namespace lull::frontend
