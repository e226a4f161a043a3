// The v2 front end's request checks and answers (what and why: v2_front_codec.h).
#include "runtime/frontend/v2_front_codec.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <string_view>

#include "runtime/net/base64.h"
#include "runtime/net/json_data_field.h"
#include "runtime/net/json_value.h"
#include "schema/one_line.h"

namespace lull::frontend {

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

bool element_fits(const net::JsonValue& e, const Datatype& d) {
  switch (d.element) {
    case Element::kBool:
      return e.kind_case() == net::JsonValue::kBoolValue;
    case Element::kString:
      return e.kind_case() == net::JsonValue::kStringValue;
    case Element::kInteger:
      return e.kind_case() == net::JsonValue::kNumberValue && e.number_value() == std::floor(e.number_value()) &&
             e.number_value() >= d.min && e.number_value() < d.max;
    case Element::kFloat:
      return e.kind_case() == net::JsonValue::kNumberValue && e.number_value() >= d.min && e.number_value() <= d.max;
  }
  return false;
}

// Counts the elements of `data` (nested lists flattened, row-major) and
// checks each against the datatype; the first that does not fit is named.
// *first is the first element found (empty lists hold none, wherever they are).
bool count_elements(const net::JsonValue& data, const Datatype& d, std::int64_t* count, const net::JsonValue** first,
                    std::string* bad) {
  if (data.kind_case() == net::JsonValue::kListValue) {
    for (const auto& e : data.list_value().values())
      if (!count_elements(e, d, count, first, bad)) return false;
    return true;
  }
  if (!element_fits(data, d)) {
    *bad = "element " + std::to_string(*count) + " (" + net::json_text(data) + ") is not " +
           (d.element == Element::kBool      ? std::string("a boolean")
            : d.element == Element::kString  ? std::string("a string")
            : d.element == Element::kInteger ? std::string("an integer in range of ") + d.name
                                             : std::string("a number in range of ") + d.name);
    return false;
  }
  if (*count == 0) *first = &data;
  ++*count;
  return true;
}

// Names and values quoted from the request may hold control characters:
// written as escapes, so the error stays one line.
bool fail(std::string* error, const std::string& message) {
  *error = one_line(message);
  return false;
}

bool is_object(const net::JsonValue* v) { return v && v->kind_case() == net::JsonValue::kStructValue; }
bool is_list(const net::JsonValue* v) { return v && v->kind_case() == net::JsonValue::kListValue; }

// Checks one input; `where` is "inputs[i]". Sets *bytes_element to its one
// BYTES element when it is exactly that.
bool check_input(const net::JsonValue& in, const std::string& where, std::set<std::string>* names,
                 const net::JsonValue** bytes_element, std::string* error) {
  if (!is_object(&in)) return fail(error, where + ": not an object");
  const net::JsonValue* name = net::json_field(in, "name");
  if (!name || name->kind_case() != net::JsonValue::kStringValue || name->string_value().empty())
    return fail(error, where + ".name: missing or not a non-empty string");
  const std::string label = where + " (" + name->string_value() + ")";
  if (!names->insert(name->string_value()).second) return fail(error, label + ": a second input of this name");
  const net::JsonValue* datatype = net::json_field(in, "datatype");
  if (!datatype || datatype->kind_case() != net::JsonValue::kStringValue)
    return fail(error, label + ".datatype: missing or not a string");
  const Datatype* d = find_datatype(datatype->string_value());
  if (!d)
    return fail(error,
                label + ".datatype: '" + datatype->string_value() +
                    "' is not one of the protocol's (BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64, BYTES)");
  const net::JsonValue* shape = net::json_field(in, "shape");
  if (!is_list(shape)) return fail(error, label + ".shape: missing or not a list");
  // The element count in checked arithmetic: every dimension is first
  // bounded by kMaxElements (exact in a double), and a product past it is
  // refused before it can overflow, unless a zero dimension makes it empty.
  std::int64_t expected = 1;
  bool too_large = false, empty = false;
  for (const auto& dim : shape->list_value().values()) {
    if (dim.kind_case() != net::JsonValue::kNumberValue || dim.number_value() < 0 ||
        dim.number_value() != std::floor(dim.number_value()) || dim.number_value() > static_cast<double>(kMaxElements))
      return fail(error, label + ".shape: " + net::json_text(*shape) + " holds a dimension that is not a count");
    const auto n = static_cast<std::int64_t>(dim.number_value());
    empty = empty || n == 0;
    if (!too_large) too_large = __builtin_mul_overflow(expected, n, &expected) || expected > kMaxElements;
  }
  if (empty)
    expected = 0;
  else if (too_large)
    return fail(error, label + ".shape: " + net::json_text(*shape) + " is too large");
  const net::JsonValue* params = net::json_field(in, "parameters");
  if (params && !is_object(params)) return fail(error, label + ".parameters: not an object");
  if (params && net::json_field(*params, "binary_data_size"))
    return fail(error, label + ": the binary tensor data extension is not supported; send \"data\" as JSON");
  const net::JsonValue* data = net::json_field(in, "data");
  if (!is_list(data)) return fail(error, label + ".data: missing or not a list");
  std::int64_t count = 0;
  const net::JsonValue* first = nullptr;
  std::string bad;
  if (!count_elements(*data, *d, &count, &first, &bad)) return fail(error, label + ".data: " + bad);
  if (count != expected)
    return fail(error, label + ": shape " + net::json_text(*shape) + " holds " + std::to_string(expected) +
                           " elements but data has " + std::to_string(count));
  if (d->element == Element::kString && count == 1) *bytes_element = first;
  return true;
}

// The input as it goes to a model that reads v2 tensors: its own fields only.
std::string input_json(const net::JsonValue& in) {
  std::string s = "{\"name\":" + net::json_text(*net::json_field(in, "name")) +
                  ",\"datatype\":" + net::json_text(*net::json_field(in, "datatype")) +
                  ",\"shape\":" + net::json_text(*net::json_field(in, "shape"));
  if (const net::JsonValue* p = net::json_field(in, "parameters")) s += ",\"parameters\":" + net::json_text(*p);
  return s + ",\"data\":" + net::json_text(*net::json_field(in, "data")) + "}";
}

// A prediction that is already v2 outputs: {"outputs": [...]} and nothing else.
bool v2_outputs_of(const std::string& prediction, std::string* outputs) {
  const auto first = prediction.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || prediction[first] != '{' || prediction.find("\"outputs\"") == std::string::npos)
    return false;
  net::JsonValue v;
  if (!net::parse_json(prediction, &v) || !is_object(&v) || v.struct_value().fields_size() != 1) return false;
  if (!is_list(net::json_field(v, "outputs"))) return false;
  // Its one member's value, as the backend wrote it (a re-rendered object
  // would lose its key order).
  const auto colon = prediction.find(':', prediction.find("\"outputs\""));
  const auto end = prediction.find_last_of('}');
  const auto from = prediction.find_first_not_of(" \t\r\n", colon + 1);
  const auto to = prediction.find_last_not_of(" \t\r\n", end - 1);
  *outputs = prediction.substr(from, to + 1 - from);
  return true;
}

}  // namespace

bool parse_v2_infer_request(const std::string& body, V2InferRequest* out, std::string* error) {
  // The bounded one-pass check first (json_data_field.h): no general parser
  // runs on a body nested too deep or that is not JSON.
  const net::JsonDataField scan = net::read_json_data_field(body);
  if (scan.too_deep)
    return fail(error, "JSON body nested deeper than " + std::to_string(net::kMaxJsonDepth) + " levels");
  if (!scan.valid_json) {
    if (body.find("binary_data_size") != std::string::npos)
      return fail(error, "the binary tensor data extension is not supported; send the tensors as JSON \"data\"");
    return fail(error, "body is not valid JSON");
  }
  net::JsonValue doc;
  if (!scan.is_object || !net::parse_json(body, &doc) || !is_object(&doc))
    return fail(error, "body is not a JSON object (an inference request)");
  if (const net::JsonValue* id = net::json_field(doc, "id")) {
    if (id->kind_case() != net::JsonValue::kStringValue) return fail(error, "id: not a string");
    out->id = id->string_value();
    out->has_id = true;
  }
  if (const net::JsonValue* p = net::json_field(doc, "parameters"); p && !is_object(p))
    return fail(error, "parameters: not an object");
  if (const net::JsonValue* outputs = net::json_field(doc, "outputs")) {
    if (!is_list(outputs)) return fail(error, "outputs: not a list");
    for (int i = 0; i < outputs->list_value().values_size(); ++i) {
      const net::JsonValue& o = outputs->list_value().values(i);
      if (!is_object(&o) || net::json_string(o, "name").empty())
        return fail(error, "outputs[" + std::to_string(i) + "]: not an object with a string \"name\"");
    }
  }
  const net::JsonValue* inputs = net::json_field(doc, "inputs");
  if (!is_list(inputs) || inputs->list_value().values_size() == 0)
    return fail(error, "inputs: missing or empty (the request needs at least one input tensor)");
  std::set<std::string> names;
  const net::JsonValue* bytes_element = nullptr;
  for (int i = 0; i < inputs->list_value().values_size(); ++i) {
    const net::JsonValue* element = nullptr;
    if (!check_input(inputs->list_value().values(i), "inputs[" + std::to_string(i) + "]", &names, &element, error))
      return false;
    bytes_element = element;
  }
  if (inputs->list_value().values_size() == 1 && bytes_element) {
    const net::JsonValue& in = inputs->list_value().values(0);
    const net::JsonValue* params = net::json_field(in, "parameters");
    if (params && net::json_string(*params, "content_type") == "base64") {
      auto bytes = net::base64_decode(bytes_element->string_value());
      if (!bytes)
        return fail(error, "inputs[0] (" + net::json_string(in, "name") + ").data: not base64 (content_type base64)");
      out->input = std::move(*bytes);
    } else {
      out->input = bytes_element->string_value();
    }
    if (out->input.empty())
      return fail(error, "inputs[0] (" + net::json_string(in, "name") + ").data: the element is empty");
    return true;
  }
  std::string s = "{\"inputs\":[";
  for (int i = 0; i < inputs->list_value().values_size(); ++i) {
    if (i) s += ',';
    s += input_json(inputs->list_value().values(i));
  }
  out->input = s + "]}";
  return true;
}

std::string v2_infer_response(const std::string& model, const std::string& task, const V2InferRequest& request,
                              const std::string& prediction) {
  std::string s = "{\"model_name\":" + net::json_quoted(model);
  if (request.has_id) s += ",\"id\":" + net::json_quoted(request.id);
  s += ",\"parameters\":{\"lull_task\":" + net::json_quoted(task) + "},\"outputs\":";
  std::string outputs;
  if (v2_outputs_of(prediction, &outputs))
    s += outputs;
  else
    s += "[{\"name\":\"output\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[" + net::json_quoted(prediction) + "]}]";
  return s + "}";
}

std::string v2_error_body(const std::string& message) { return "{\"error\":" + net::json_quoted(message) + "}"; }

std::string torchserve_error_message(const std::string& body) {
  net::JsonValue v;
  if (net::parse_json(body, &v)) {
    const std::string message = net::json_string(v, "message");
    if (!message.empty()) return message;
  }
  return body;
}

}  // namespace lull::frontend
