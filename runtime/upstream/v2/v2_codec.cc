// The v2 JSON codec (why and what: see v2_codec.h). Responses are read with
// protobuf's JSON Value (json_value.h), like the other small answers lull
// reads; a BYTES element that is JSON is passed on as the text it is.
#include "runtime/upstream/v2/v2_codec.h"

#include "runtime/net/base64.h"
#include "runtime/net/json_data_field.h"
#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/batch_codec.h"

namespace lull::v2 {

namespace {

[[noreturn]] void fail(const std::string& why) { throw torchserve::BatchCodecError("v2 inference response: " + why); }

// A tensor element as JSON text. Scalars by hand: protobuf's writer costs
// microseconds per call, and a tensor has thousands of elements.
std::string element_text(const net::JsonValue& e) {
  switch (e.kind_case()) {
    case net::JsonValue::kNumberValue:
      return net::json_number_text(e.number_value());
    case net::JsonValue::kStringValue:
      return net::json_quoted(e.string_value());
    case net::JsonValue::kBoolValue:
      return e.bool_value() ? "true" : "false";
    case net::JsonValue::kNullValue:
      return "null";
    default:
      return net::json_text(e);
  }
}

// The elements of "data" in row-major order (nested arrays flattened).
void flatten(const net::JsonValue& v, std::vector<const net::JsonValue*>& out, int depth) {
  if (depth > 32) fail("data nested too deep");
  if (v.kind_case() == net::JsonValue::kListValue) {
    for (const auto& e : v.list_value().values()) flatten(e, out, depth + 1);
  } else {
    out.push_back(&v);
  }
}

struct Output {
  std::string name, datatype;
  std::vector<std::int64_t> shape;
  std::vector<const net::JsonValue*> data;
  bool base64 = false;
  std::string parameters;  // the output's other parameters as JSON text, passed on; "" none
  size_t per_query = 0;    // elements per query (the product of shape[1:])
};

Output read_output(const net::JsonValue& o, size_t index, size_t expected) {
  Output out;
  const std::string where = "outputs[" + std::to_string(index) + "]";
  out.name = net::json_string(o, "name");
  out.datatype = net::json_string(o, "datatype");
  const net::JsonValue* shape = net::json_field(o, "shape");
  const net::JsonValue* data = net::json_field(o, "data");
  if (!shape || shape->kind_case() != net::JsonValue::kListValue || shape->list_value().values_size() == 0)
    fail(where + ": no \"shape\" list");
  if (!data || data->kind_case() != net::JsonValue::kListValue) fail(where + ": no \"data\" list");
  std::int64_t total = 1;
  for (const auto& d : shape->list_value().values()) {
    if (d.kind_case() != net::JsonValue::kNumberValue || d.number_value() < 0 || d.number_value() > 1e12 ||
        d.number_value() != static_cast<double>(static_cast<std::int64_t>(d.number_value())))
      fail(where + ": shape holds a dimension that is not a count");
    out.shape.push_back(static_cast<std::int64_t>(d.number_value()));
    // No tensor answer has 2^40 elements: refused before the product could overflow.
    if (out.shape.back() > 0 && total > (std::int64_t{1} << 40) / out.shape.back()) fail(where + ": shape too large");
    total *= out.shape.back();
  }
  if (out.shape[0] != static_cast<std::int64_t>(expected))
    fail(where + " (" + out.name + "): shape[0] is " + std::to_string(out.shape[0]) + " for a batch of " +
         std::to_string(expected));
  flatten(*data, out.data, 0);
  if (static_cast<std::int64_t>(out.data.size()) != total)
    fail(where + " (" + out.name + "): " + std::to_string(out.data.size()) + " data elements for shape of " +
         std::to_string(total));
  out.per_query = expected ? static_cast<size_t>(total) / expected : 0;
  if (const net::JsonValue* params = net::json_field(o, "parameters");
      params && params->kind_case() == net::JsonValue::kStructValue) {
    out.base64 = net::json_string(*params, "content_type") == "base64";
    net::JsonValue rest = *params;  // what the model said of its output, less what lull decoded
    auto* fields = rest.mutable_struct_value()->mutable_fields();
    if (out.base64) fields->erase("content_type");
    fields->erase("binary_data_size");
    if (!fields->empty()) out.parameters = net::json_text(rest);
  }
  return out;
}

// A BYTES element's bytes (base64-decoded when the output says so).
std::string element_bytes(const Output& o, const net::JsonValue& e) {
  if (e.kind_case() != net::JsonValue::kStringValue) return element_text(e);
  if (!o.base64) return e.string_value();
  auto bytes = net::base64_decode(e.string_value());
  if (!bytes) fail("output " + o.name + ": an element is not base64");
  return std::move(*bytes);
}

// The element as the prediction's JSON text: itself when it holds JSON.
std::string element_prediction(const Output& o, const net::JsonValue& e) {
  std::string bytes = element_bytes(o, e);
  if (e.kind_case() != net::JsonValue::kStringValue) return bytes;
  const auto first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (bytes[first] == '{' || bytes[first] == '[') &&
      net::read_json_data_field(bytes).valid_json)
    return bytes;
  return net::json_quoted(bytes);
}

// Query q's rows of every output, in the protocol's form.
std::string rows_of(const std::vector<Output>& outputs, size_t q) {
  std::string s = "{\"outputs\":[";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Output& o = outputs[i];
    if (i) s += ',';
    s += "{\"name\":" + net::json_quoted(o.name) + ",\"datatype\":" + net::json_quoted(o.datatype) + ",\"shape\":[1";
    for (size_t d = 1; d < o.shape.size(); ++d) s += "," + std::to_string(o.shape[d]);
    s += "]";
    if (!o.parameters.empty()) s += ",\"parameters\":" + o.parameters;
    s += ",\"data\":[";
    for (size_t k = 0; k < o.per_query; ++k) {
      if (k) s += ',';
      const net::JsonValue& e = *o.data[q * o.per_query + k];
      s += o.base64 && e.kind_case() == net::JsonValue::kStringValue ? net::json_quoted(element_bytes(o, e))
                                                                     : element_text(e);
    }
    s += "]}";
  }
  return s + "]}";
}

}  // namespace

std::string encode_v2_bytes_request(const std::vector<const std::string*>& inputs, const std::string& input_name) {
  // Plain strings when each is UTF-8 and escapes to no more than its base64
  // would take (so request_split.h's base64 estimate bounds either form).
  bool plain = true;
  for (const std::string* in : inputs)
    if (!net::is_utf8(*in) || net::json_quoted(*in).size() > 4 * ((in->size() + 2) / 3) + 2) {
      plain = false;
      break;
    }
  std::string body = "{\"inputs\":[{\"name\":" + net::json_quoted(input_name) + ",\"shape\":[" +
                     std::to_string(inputs.size()) + "],\"datatype\":\"BYTES\",";
  if (!plain) body += "\"parameters\":{\"content_type\":\"base64\"},";
  body += "\"data\":[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) body += ',';
    body += plain ? net::json_quoted(*inputs[i]) : "\"" + net::base64_encode(*inputs[i]) + "\"";
  }
  return body + "]}]}";
}

std::string encode_v2_bytes_binary_request(const std::vector<const std::string*>& inputs, const std::string& input_name,
                                           size_t* header_length) {
  size_t raw = 0;
  for (const std::string* in : inputs) raw += 4 + in->size();
  std::string body = "{\"inputs\":[{\"name\":" + net::json_quoted(input_name) + ",\"shape\":[" +
                     std::to_string(inputs.size()) +
                     "],\"datatype\":\"BYTES\",\"parameters\":{\"binary_data_size\":" + std::to_string(raw) + "}}]}";
  *header_length = body.size();
  body.reserve(body.size() + raw);
  for (const std::string* in : inputs) {
    const auto n = static_cast<std::uint32_t>(in->size());
    const char length[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                            static_cast<char>((n >> 16) & 0xff), static_cast<char>(n >> 24)};
    body.append(length, 4);
    body += *in;
  }
  return body;
}

V2TensorQuery read_v2_tensor_query(const std::string& input) {
  V2TensorQuery q;
  // Cheap rejection first: query bytes that are not a tensor set never parse.
  const auto first = input.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || input[first] != '{' || input.find("\"inputs\"") == std::string::npos) return q;
  net::JsonValue doc;
  if (!net::parse_json(input, &doc)) return q;
  const net::JsonValue* inputs = net::json_field(doc, "inputs");
  if (!inputs || inputs->kind_case() != net::JsonValue::kListValue || inputs->list_value().values_size() == 0) return q;
  std::string layout;
  for (const auto& t : inputs->list_value().values()) {
    const net::JsonValue* shape = net::json_field(t, "shape");
    const net::JsonValue* data = net::json_field(t, "data");
    const std::string name = net::json_string(t, "name"), datatype = net::json_string(t, "datatype");
    if (name.empty() || datatype.empty() || !shape || shape->kind_case() != net::JsonValue::kListValue ||
        shape->list_value().values_size() == 0 || shape->list_value().values(0).number_value() != 1 || !data ||
        data->kind_case() != net::JsonValue::kListValue)
      return V2TensorQuery{};
    std::vector<const net::JsonValue*> elements;
    try {
      flatten(*data, elements, 0);
    } catch (const torchserve::BatchCodecError&) {
      return V2TensorQuery{};  // nested too deep: bytes, as any other
    }
    std::int64_t count = 1;
    std::string rest;  // the shape after its first dimension
    for (int d = 1; d < shape->list_value().values_size(); ++d) {
      const double n = shape->list_value().values(d).number_value();
      if (n < 0 || n > 1e9 || n != static_cast<double>(static_cast<std::int64_t>(n))) return V2TensorQuery{};
      if (n > 0 && count > (std::int64_t{1} << 40) / static_cast<std::int64_t>(n)) return V2TensorQuery{};
      count *= static_cast<std::int64_t>(n);
      rest += "," + std::to_string(static_cast<std::int64_t>(n));
    }
    if (static_cast<std::int64_t>(elements.size()) != count) return V2TensorQuery{};
    const net::JsonValue* params = net::json_field(t, "parameters");
    q.names.push_back(name);
    q.datatypes.push_back(datatype);
    q.shapes.push_back(rest);
    q.parameters.push_back(params ? net::json_text(*params) : "");
    q.data.emplace_back();
    for (const net::JsonValue* e : elements) q.data.back().push_back(element_text(*e));
    layout += net::json_quoted(name) + datatype + "[" + rest + "]" + q.parameters.back() + ";";
  }
  q.layout = std::move(layout);
  return q;
}

std::string encode_v2_tensor_request(const std::vector<V2TensorQuery>& queries) {
  const V2TensorQuery& head = queries.front();
  std::string body = "{\"inputs\":[";
  for (size_t i = 0; i < head.names.size(); ++i) {
    if (i) body += ',';
    body += "{\"name\":" + net::json_quoted(head.names[i]) + ",\"shape\":[" + std::to_string(queries.size()) +
            head.shapes[i] + "],\"datatype\":" + net::json_quoted(head.datatypes[i]) + ",";
    if (!head.parameters[i].empty()) body += "\"parameters\":" + head.parameters[i] + ",";
    body += "\"data\":[";
    bool first = true;
    for (const auto& q : queries)
      for (const auto& e : q.data[i]) {
        if (!first) body += ',';
        first = false;
        body += e;
      }
    body += "]}";
  }
  return body + "]}";
}

std::int64_t v2_envelope_bytes(const std::string& input_name) {
  // The fixed text around the data, the quoted name (at most 6 bytes per
  // byte escaped) and 20 digits of shape.
  return static_cast<std::int64_t>(encode_v2_bytes_request({}, input_name).size()) +
         static_cast<std::int64_t>(std::string("\"parameters\":{\"content_type\":\"base64\"},").size()) +
         5 * static_cast<std::int64_t>(input_name.size()) + 20;
}

std::vector<std::string> decode_v2_infer_response(const std::string& body, size_t expected) {
  net::JsonValue doc;
  if (!net::parse_json(body, &doc) || doc.kind_case() != net::JsonValue::kStructValue) fail("not a JSON object");
  const net::JsonValue* outs = net::json_field(doc, "outputs");
  if (!outs || outs->kind_case() != net::JsonValue::kListValue || outs->list_value().values_size() == 0)
    fail("no \"outputs\" list");
  std::vector<Output> outputs;
  for (int i = 0; i < outs->list_value().values_size(); ++i)
    outputs.push_back(read_output(outs->list_value().values(i), static_cast<size_t>(i), expected));
  std::vector<std::string> predictions;
  predictions.reserve(expected);
  const bool one_bytes = outputs.size() == 1 && outputs[0].datatype == "BYTES" && outputs[0].per_query == 1;
  for (size_t q = 0; q < expected; ++q)
    predictions.push_back(one_bytes ? element_prediction(outputs[0], *outputs[0].data[q]) : rows_of(outputs, q));
  return predictions;
}

std::string v2_error_message(const std::string& body) {
  net::JsonValue doc;
  if (!net::parse_json(body, &doc)) return "";
  return net::json_string(doc, "error");
}

}  // namespace lull::v2
