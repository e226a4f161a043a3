// The v2 front end's request checks and answers (what and why: v2_front_codec.h).
#include "runtime/frontend/v2_front_codec.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <set>
#include <string_view>
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

// The protocol's tensor datatypes, and what an element of each must be.
// Integer ranges are [min, end): both powers of two, so exact in a double
// (an inclusive 2^64 - 1 would round up to 2^64 and let 2^64 through).
enum class Element { kBool, kInteger, kFloat, kString };
struct Datatype {
  const char* name;
  Element element;
  double min, max;  // integers: [min, max); floats: [min, max]
};
constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr Datatype kDatatypes[] = {
    {"BOOL", Element::kBool, 0, 0},
    {"UINT8", Element::kInteger, 0, 256},
    {"UINT16", Element::kInteger, 0, 65536},
    {"UINT32", Element::kInteger, 0, 4294967296.0},
    {"UINT64", Element::kInteger, 0, 2 * kTwoTo63},
    {"INT8", Element::kInteger, -128, 128},
    {"INT16", Element::kInteger, -32768, 32768},
    {"INT32", Element::kInteger, -2147483648.0, 2147483648.0},
    {"INT64", Element::kInteger, -kTwoTo63, kTwoTo63},
    {"FP16", Element::kFloat, -65504, 65504},
    {"BF16", Element::kFloat, -3.3895313892515355e38, 3.3895313892515355e38},
    {"FP32", Element::kFloat, -3.4028234663852886e38, 3.4028234663852886e38},
    {"FP64", Element::kFloat, -1.7976931348623157e308, 1.7976931348623157e308},
    {"BYTES", Element::kString, 0, 0},
};
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

const Datatype* find_datatype(const std::string& name) {
  for (const auto& d : kDatatypes)
    if (name == d.name) return &d;
  return nullptr;
}

bool element_fits(const JsonValue& e, const Datatype& d) {
  switch (d.element) {
    case Element::kBool:
      return e.kind_case() == JsonValue::kBoolValue;
    case Element::kString:
      return e.kind_case() == JsonValue::kStringValue;
    case Element::kInteger:
      return e.kind_case() == JsonValue::kNumberValue && e.number_value() == std::floor(e.number_value()) &&
             e.number_value() >= d.min && e.number_value() < d.max;
    case Element::kFloat:
      return e.kind_case() == JsonValue::kNumberValue && e.number_value() >= d.min && e.number_value() <= d.max;
  }
  return false;
}

// Counts the elements of `data` (nested lists flattened, row-major) and
// checks each against the datatype; the first that does not fit is named.
// *first is the first element found (empty lists hold none, wherever they are).
bool count_elements(const JsonValue& data, const Datatype& d, std::int64_t* count,
                    std::vector<const JsonValue*>* elements, std::string* bad) {
  if (data.kind_case() == JsonValue::kListValue) {
    for (const auto& e : data.list_value().values())
      if (!count_elements(e, d, count, elements, bad)) return false;
    return true;
  }
  if (!element_fits(data, d)) {
    *bad = "element " + std::to_string(*count) + " (" + json_text(data) + ") is not " +
           (d.element == Element::kBool      ? std::string("a boolean")
            : d.element == Element::kString  ? std::string("a string")
            : d.element == Element::kInteger ? std::string("an integer in range of ") + d.name
                                             : std::string("a number in range of ") + d.name);
    return false;
  }
  elements->push_back(&data);
  ++*count;
  return true;
}

// A tensor element as JSON text (scalars by hand: protobuf's writer costs
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

// One input, checked: what the rows are cut from.
struct CheckedInput {
  const JsonValue* in = nullptr;
  std::string label;  // "inputs[i] (name)"
  const Datatype* datatype = nullptr;
  std::vector<std::int64_t> shape;
  std::vector<const JsonValue*> elements;  // row-major
};

// Names and values quoted from the request may hold control characters:
// written as escapes, so the error stays one line.
bool fail(std::string* error, const std::string& message) {
  *error = one_line(message);
  return false;
}

bool is_object(const JsonValue* v) { return v && v->kind_case() == JsonValue::kStructValue; }
bool is_list(const JsonValue* v) { return v && v->kind_case() == JsonValue::kListValue; }

// Checks one input; `where` is "inputs[i]". Fills *out with what its rows are cut from.
bool check_input(const JsonValue& in, const std::string& where, std::set<std::string>* names, CheckedInput* out,
                 std::string* error) {
  if (!is_object(&in)) return fail(error, where + ": not an object");
  const JsonValue* name = json_field(in, "name");
  if (!name || name->kind_case() != JsonValue::kStringValue || name->string_value().empty())
    return fail(error, where + ".name: missing or not a non-empty string");
  const std::string label = where + " (" + name->string_value() + ")";
  if (!names->insert(name->string_value()).second) return fail(error, label + ": a second input of this name");
  const JsonValue* datatype = json_field(in, "datatype");
  if (!datatype || datatype->kind_case() != JsonValue::kStringValue)
    return fail(error, label + ".datatype: missing or not a string");
  const Datatype* d = find_datatype(datatype->string_value());
  if (!d)
    return fail(error,
                label + ".datatype: '" + datatype->string_value() +
                    "' is not one of the protocol's (BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64, BYTES)");
  const JsonValue* shape = json_field(in, "shape");
  if (!is_list(shape)) return fail(error, label + ".shape: missing or not a list");
  // The element count in checked arithmetic: every dimension is first
  // bounded by kMaxElements (exact in a double), and a product past it is
  // refused before it can overflow, unless a zero dimension makes it empty.
  std::int64_t expected = 1;
  bool too_large = false, empty = false;
  for (const auto& dim : shape->list_value().values()) {
    if (dim.kind_case() != JsonValue::kNumberValue || dim.number_value() < 0 ||
        dim.number_value() != std::floor(dim.number_value()) || dim.number_value() > static_cast<double>(kMaxElements))
      return fail(error, label + ".shape: " + json_text(*shape) + " holds a dimension that is not a count");
    const auto n = static_cast<std::int64_t>(dim.number_value());
    out->shape.push_back(n);
    empty = empty || n == 0;
    if (!too_large) too_large = __builtin_mul_overflow(expected, n, &expected) || expected > kMaxElements;
  }
  if (empty)
    expected = 0;
  else if (too_large)
    return fail(error, label + ".shape: " + json_text(*shape) + " is too large");
  const JsonValue* params = json_field(in, "parameters");
  if (params && !is_object(params)) return fail(error, label + ".parameters: not an object");
  if (params && json_field(*params, "binary_data_size"))
    return fail(error, label +
                           ": binary_data_size without the Inference-Header-Content-Length header "
                           "(the binary tensor extension: the header gives the length of the JSON part)");
  const JsonValue* data = json_field(in, "data");
  if (!is_list(data)) return fail(error, label + ".data: missing or not a list");
  std::int64_t count = 0;
  std::string bad;
  if (!count_elements(*data, *d, &count, &out->elements, &bad)) return fail(error, label + ".data: " + bad);
  if (count != expected)
    return fail(error, label + ": shape " + json_text(*shape) + " holds " + std::to_string(expected) +
                           " elements but data has " + std::to_string(count));
  out->in = &in;
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
    s += "{\"name\":" + json_text(*json_field(*c.in, "name")) + ",\"datatype\":" + json_quoted(c.datatype->name) +
         ",\"shape\":[1";
    for (size_t d = 1; d < c.shape.size(); ++d) s += "," + std::to_string(c.shape[d]);
    s += "]";
    if (const JsonValue* p = json_field(*c.in, "parameters")) s += ",\"parameters\":" + json_text(*p);
    s += ",\"data\":[";
    const auto per = static_cast<std::int64_t>(c.elements.size()) / rows;
    for (std::int64_t k = 0; k < per; ++k) {
      if (k) s += ',';
      s += element_text(*c.elements[static_cast<size_t>(r * per + k)]);
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
  if (!parse_json(prediction, &v) || !is_object(&v) || v.struct_value().fields_size() != 1) return false;
  if (!is_list(json_field(v, "outputs"))) return false;
  // Its one member's value, as the backend wrote it (a re-rendered object
  // would lose its key order).
  const auto colon = prediction.find(':', prediction.find("\"outputs\""));
  const auto end = prediction.find_last_of('}');
  const auto from = prediction.find_first_not_of(" \t\r\n", colon + 1);
  const auto to = prediction.find_last_not_of(" \t\r\n", end - 1);
  *outputs = prediction.substr(from, to + 1 - from);
  return true;
}

// Bytes per element of a datatype's binary form (the binary tensor extension); 0 for BYTES.
size_t binary_element_size(const std::string& datatype) {
  if (datatype == "BOOL" || datatype == "UINT8" || datatype == "INT8") return 1;
  if (datatype == "UINT16" || datatype == "INT16" || datatype == "FP16" || datatype == "BF16") return 2;
  if (datatype == "UINT32" || datatype == "INT32" || datatype == "FP32") return 4;
  return 8;  // UINT64, INT64, FP64
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

// One input's binary tensor as the JSON "data" list it stands for.
bool binary_data(const std::string& label, const std::string& datatype, std::string_view raw, JsonValue* data,
                 std::string* error) {
  auto* list = data->mutable_list_value();
  if (datatype == "BYTES") {
    size_t at = 0;
    while (at < raw.size()) {
      if (raw.size() - at < 4)
        return fail(error, label + ": binary BYTES element " + std::to_string(list->values_size()) +
                               " has a truncated 4-byte length");
      const auto n = read_le<std::uint32_t>(raw.data() + at);
      at += 4;
      if (n > raw.size() - at)
        return fail(error, label + ": binary BYTES element " + std::to_string(list->values_size()) + " of " +
                               std::to_string(n) + " bytes runs past its binary_data_size");
      list->add_values()->set_string_value(std::string(raw.substr(at, n)));
      at += n;
    }
    return true;
  }
  const Datatype* d = find_datatype(datatype);
  if (!d) return true;  // the datatype check names it
  const size_t size = binary_element_size(datatype);
  if (raw.size() % size != 0)
    return fail(error, label + ": binary_data_size " + std::to_string(raw.size()) + " is not a whole number of " +
                           datatype + " elements (" + std::to_string(size) + " bytes each)");
  for (size_t at = 0; at < raw.size(); at += size) {
    const char* p = raw.data() + at;
    JsonValue* v = list->add_values();
    if (datatype == "BOOL")
      v->set_bool_value(*p != 0);
    else if (datatype == "UINT8")
      v->set_number_value(read_le<std::uint8_t>(p));
    else if (datatype == "INT8")
      v->set_number_value(read_le<std::int8_t>(p));
    else if (datatype == "UINT16")
      v->set_number_value(read_le<std::uint16_t>(p));
    else if (datatype == "INT16")
      v->set_number_value(read_le<std::int16_t>(p));
    else if (datatype == "FP16")
      v->set_number_value(half_to_double(read_le<std::uint16_t>(p)));
    else if (datatype == "BF16")
      v->set_number_value(bfloat16_to_double(read_le<std::uint16_t>(p)));
    else if (datatype == "UINT32")
      v->set_number_value(read_le<std::uint32_t>(p));
    else if (datatype == "INT32")
      v->set_number_value(read_le<std::int32_t>(p));
    else if (datatype == "FP32")
      v->set_number_value(read_le<float>(p));
    else if (datatype == "UINT64")
      v->set_number_value(static_cast<double>(read_le<std::uint64_t>(p)));
    else if (datatype == "INT64")
      v->set_number_value(static_cast<double>(read_le<std::int64_t>(p)));
    else
      v->set_number_value(read_le<double>(p));
    if (d->element == Element::kFloat && !std::isfinite(v->number_value()))
      return fail(error, label + ": binary element " + std::to_string(at / size) + " is not a finite number");
  }
  return true;
}

// The binary tensor extension: each input whose parameters give
// binary_data_size takes that many bytes of `binary`, in input order, as its
// "data" (binary_data_size removed: the model sees a JSON request).
bool splice_binary(JsonValue* doc, std::string_view binary, std::string* error) {
  auto* fields = doc->mutable_struct_value()->mutable_fields();
  const auto inputs = fields->find("inputs");
  if (inputs == fields->end() || inputs->second.kind_case() != JsonValue::kListValue) return true;  // checked later
  size_t at = 0;
  auto* list = inputs->second.mutable_list_value();
  for (int i = 0; i < list->values_size(); ++i) {
    JsonValue& in = *list->mutable_values(i);
    if (in.kind_case() != JsonValue::kStructValue) continue;
    auto* in_fields = in.mutable_struct_value()->mutable_fields();
    const auto params = in_fields->find("parameters");
    if (params == in_fields->end() || params->second.kind_case() != JsonValue::kStructValue) continue;
    auto* p_fields = params->second.mutable_struct_value()->mutable_fields();
    const auto size = p_fields->find("binary_data_size");
    if (size == p_fields->end()) continue;
    const std::string label = "inputs[" + std::to_string(i) + "] (" + json_string(in, "name") + ")";
    const double n = size->second.number_value();
    if (size->second.kind_case() != JsonValue::kNumberValue || n < 0 || n != std::floor(n))
      return fail(error, label + ".parameters.binary_data_size: not a count of bytes");
    if (n > static_cast<double>(binary.size() - at))
      return fail(error, label + ": binary_data_size " + json_number_text(n) + " runs past the body's binary part (" +
                             std::to_string(binary.size() - at) + " bytes left)");
    if (in_fields->count("data")) return fail(error, label + ": both \"data\" and binary_data_size");
    JsonValue data;
    if (!binary_data(label, json_string(in, "datatype"), binary.substr(at, static_cast<size_t>(n)), &data, error))
      return false;
    at += static_cast<size_t>(n);
    p_fields->erase("binary_data_size");
    if (p_fields->empty()) in_fields->erase("parameters");
    (*in_fields)["data"] = std::move(data);
  }
  if (at != binary.size())
    return fail(error, "the body holds " + std::to_string(binary.size() - at) +
                           " bytes past the inputs' binary_data_size (Inference-Header-Content-Length)");
  return true;
}

bool parse_v2_json_request(const std::string& body, std::string_view binary, bool extension, V2InferRequest* out,
                           std::string* error) {
  // The bounded one-pass check first (json_data_field.h): no general parser
  // runs on a body nested too deep or that is not JSON.
  const JsonDataField scan = read_json_data_field(body);
  if (scan.too_deep) return fail(error, "JSON body nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  if (!scan.valid_json) {
    if (!extension && body.find("binary_data_size") != std::string::npos)
      return fail(error,
                  "body is not valid JSON: binary tensors need the Inference-Header-Content-Length header "
                  "(the length of the JSON part)");
    return fail(error, extension ? "the body's JSON part (Inference-Header-Content-Length) is not valid JSON"
                                 : "body is not valid JSON");
  }
  JsonValue doc;
  if (!scan.is_object || !parse_json(body, &doc) || !is_object(&doc))
    return fail(error, "body is not a JSON object (an inference request)");
  if (extension && !splice_binary(&doc, binary, error)) return false;
  if (const JsonValue* id = json_field(doc, "id")) {
    if (id->kind_case() != JsonValue::kStringValue) return fail(error, "id: not a string");
    out->id = id->string_value();
    out->has_id = true;
  }
  if (const JsonValue* p = json_field(doc, "parameters"); p && !is_object(p))
    return fail(error, "parameters: not an object");
  if (const JsonValue* outputs = json_field(doc, "outputs")) {
    if (!is_list(outputs)) return fail(error, "outputs: not a list");
    for (int i = 0; i < outputs->list_value().values_size(); ++i) {
      const JsonValue& o = outputs->list_value().values(i);
      if (!is_object(&o) || json_string(o, "name").empty())
        return fail(error, "outputs[" + std::to_string(i) + "]: not an object with a string \"name\"");
      out->outputs.push_back(json_string(o, "name"));
    }
  }
  const JsonValue* inputs = json_field(doc, "inputs");
  if (!is_list(inputs) || inputs->list_value().values_size() == 0)
    return fail(error, "inputs: missing or empty (the request needs at least one input tensor)");
  std::set<std::string> names;
  std::vector<CheckedInput> checked(static_cast<size_t>(inputs->list_value().values_size()));
  for (int i = 0; i < inputs->list_value().values_size(); ++i)
    if (!check_input(inputs->list_value().values(i), "inputs[" + std::to_string(i) + "]", &names,
                     &checked[static_cast<size_t>(i)], error))
      return false;
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
    const JsonValue* params = json_field(*head.in, "parameters");
    const bool base64 = params && json_string(*params, "content_type") == "base64";
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::string& element = head.elements[static_cast<size_t>(r)]->string_value();
      const std::string row = rows > 1 ? " (row " + std::to_string(r) + ")" : "";
      std::string bytes;
      if (base64) {
        auto decoded = base64_decode(element);
        if (!decoded) return fail(error, head.label + ".data: not base64 (content_type base64)" + row);
        bytes = std::move(*decoded);
      } else {
        bytes = element;
      }
      if (bytes.empty()) return fail(error, head.label + ".data: the element is empty" + row);
      out->queries.push_back(std::move(bytes));
    }
    return true;
  }
  for (const CheckedInput& c : checked)
    if (c.datatype->element == Element::kString)
      for (const JsonValue* e : c.elements)
        if (!is_utf8(e->string_value()))
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
    return parse_v2_json_request(body.substr(0, n), std::string_view(body).substr(n), true, out, error);
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
