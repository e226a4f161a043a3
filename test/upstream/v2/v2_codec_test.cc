// The Open Inference Protocol codec (runtime/upstream/v2/v2_codec.h) on the
// specification's own message shapes: requests lull sends, answers it reads.
#include <catch2/catch.hpp>

#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/batch_codec.h"
#include "runtime/upstream/v2/v2_codec.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::v2;

namespace {

JsonValue parsed(const std::string& text) {
  JsonValue v;
  REQUIRE(parse_json(text, &v));
  return v;
}

std::vector<const std::string*> ptrs(const std::vector<std::string>& v) {
  std::vector<const std::string*> out;
  for (const auto& s : v) out.push_back(&s);
  return out;
}

}  // namespace

TEST_CASE("v2 codec: a batch is one BYTES input of shape [B], text as JSON strings", "[v2]") {
  const std::vector<std::string> in = {"hello world", "say \"hi\"", ""};
  const JsonValue req = parsed(encode_v2_bytes_request(ptrs(in), "input"));
  const JsonValue* inputs = json_field(req, "inputs");
  REQUIRE(inputs);
  REQUIRE(inputs->list_value().values_size() == 1);
  const JsonValue& t = inputs->list_value().values(0);
  CHECK(json_string(t, "name") == "input");
  CHECK(json_string(t, "datatype") == "BYTES");
  REQUIRE(json_field(t, "shape")->list_value().values_size() == 1);
  CHECK(json_field(t, "shape")->list_value().values(0).number_value() == 3);
  CHECK(json_field(t, "parameters") == nullptr);
  const auto& data = json_field(t, "data")->list_value();
  REQUIRE(data.values_size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(data.values(i).string_value() == in[static_cast<size_t>(i)]);
}

TEST_CASE("v2 codec: bytes that are not UTF-8 go base64, marked by content_type", "[v2]") {
  const std::vector<std::string> in = {"text", std::string("\x89PNG\r\n\x1a\n\xff\x00", 10)};
  const JsonValue req = parsed(encode_v2_bytes_request(ptrs(in), "image"));
  const JsonValue& t = json_field(req, "inputs")->list_value().values(0);
  REQUIRE(json_field(t, "parameters"));
  CHECK(json_string(*json_field(t, "parameters"), "content_type") == "base64");
  CHECK(json_field(t, "data")->list_value().values(0).string_value() == "dGV4dA==");
  CHECK_FALSE(is_utf8(in[1]));
  CHECK(is_utf8("na\xc3\xafve \xe2\x82\xac"));
  CHECK_FALSE(is_utf8("\xc3"));                         // truncated
  CHECK_FALSE(is_utf8("\xc0\xaf"));                     // overlong
  CHECK_FALSE(is_utf8("\xe0\x80\xaf"));                 // overlong, 3 bytes
  CHECK_FALSE(is_utf8("\xed\xa0\x80"));                 // a surrogate
  CHECK_FALSE(is_utf8("\xf4\x92\x8a\x93"));             // past U+10FFFF (found by fuzz_v2_codec)
  CHECK(is_utf8("\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"));  // U+1F600, U+10FFFF
}

TEST_CASE("v2 codec: the envelope bound covers every request it encodes", "[v2]") {
  // request_split.h bounds each input by its base64 string plus a comma.
  const std::vector<std::string> in = {std::string(100, '\x01'), std::string(7, 'a'), std::string(5, '\xff')};
  for (size_t n = 0; n <= in.size(); ++n) {
    const std::vector<std::string> part(in.begin(), in.begin() + static_cast<long>(n));
    std::int64_t base64 = 0;
    for (const auto& s : part) base64 += static_cast<std::int64_t>(4 * ((s.size() + 2) / 3) + 3);
    CHECK(static_cast<std::int64_t>(encode_v2_bytes_request(ptrs(part), "in\"put").size()) <=
          base64 + v2_envelope_bytes("in\"put"));
  }
}

TEST_CASE("v2 codec: one BYTES output holding JSON gives each query its element verbatim", "[v2]") {
  const std::string body =
      R"({"model_name":"m","model_version":"1","id":"42","outputs":[{"name":"output","datatype":"BYTES","shape":[3],)"
      R"("data":["{\"class\": 7, \"score\":1.0}","plain text","{\"error\":{\"code\":400,\"type\":\"InvalidInput\",\"message\":\"bad\"}}"]}]})";
  auto out = decode_v2_infer_response(body, 3);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == R"({"class": 7, "score":1.0})");  // as the model wrote it
  CHECK(out[1] == R"("plain text")");
  // A per-input error is the batch contract's, read by the same code.
  const auto status = take_input_errors(out);
  REQUIRE(status.size() == 3);
  CHECK(status == std::vector<int>{0, 0, 400});
  CHECK(parsed(out[2]).struct_value().fields().at("type").string_value() == "InvalidInput");
}

TEST_CASE("v2 codec: the specification's example answer splits by rows", "[v2]") {
  // The shape of the protocol document's inference response example: one FP32
  // output of shape [3, 2], flattened; a batch of 3 gives each query one row.
  const std::string body = R"({"id":"42","outputs":[{"name":"output0","shape":[3,2],"datatype":"FP32",)"
                           R"("data":[1.0,1.1,2.0,2.1,3.0,3.1]}]})";
  const auto out = decode_v2_infer_response(body, 3);
  REQUIRE(out.size() == 3);
  const JsonValue q1 = parsed(out[1]);
  const JsonValue& o = json_field(q1, "outputs")->list_value().values(0);
  CHECK(json_string(o, "name") == "output0");
  CHECK(json_string(o, "datatype") == "FP32");
  CHECK(json_field(o, "shape")->list_value().values(0).number_value() == 1);
  CHECK(json_field(o, "shape")->list_value().values(1).number_value() == 2);
  CHECK(json_field(o, "data")->list_value().values(0).number_value() == Approx(2.0));
  CHECK(json_field(o, "data")->list_value().values(1).number_value() == Approx(2.1));
  // Natural (nested) data is the same tensor.
  const auto nested = decode_v2_infer_response(
      R"({"outputs":[{"name":"output0","shape":[3,2],"datatype":"FP32","data":[[1.0,1.1],[2.0,2.1],[3.0,3.1]]}]})", 3);
  CHECK(nested == out);
}

TEST_CASE("v2 codec: answers that do not fit the batch are refused with the reason", "[v2]") {
  auto refused = [](const std::string& body, size_t n) {
    try {
      decode_v2_infer_response(body, n);
    } catch (const BatchCodecError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("<html>", 1).find("not a JSON object") != std::string::npos);
  CHECK(refused(R"({"model_name":"m"})", 1).find("no \"outputs\"") != std::string::npos);
  CHECK(refused(R"({"outputs":[{"name":"o","datatype":"BYTES","shape":[2],"data":["a","b"]}]})", 3)
            .find("shape[0] is 2 for a batch of 3") != std::string::npos);
  CHECK(refused(R"({"outputs":[{"name":"o","datatype":"FP32","shape":[2,2],"data":[1,2,3]}]})", 2)
            .find("3 data elements") != std::string::npos);
  CHECK(refused(R"({"outputs":[{"name":"o","datatype":"FP32","shape":[-1],"data":[]}]})", 1).find("not a count") !=
        std::string::npos);
}

TEST_CASE("v2 codec: base64 BYTES outputs are decoded, error bodies give their message", "[v2]") {
  const auto out = decode_v2_infer_response(
      R"({"outputs":[{"name":"o","datatype":"BYTES","shape":[1],"parameters":{"content_type":"base64"},"data":["eyJhIjoxfQ=="]}]})",
      1);
  CHECK(out == std::vector<std::string>{R"({"a":1})"});
  CHECK(v2_error_message(R"({"error": "unknown model: 'x'"})") == "unknown model: 'x'");
  CHECK(v2_error_message("not json").empty());
}

TEST_CASE("v2 codec: tensor queries of one layout are stacked along the first dimension", "[v2]") {
  // Two queries as lull's v2 front end stores a request with tensor inputs.
  const std::string q1 = R"({"inputs":[{"name":"pixels","datatype":"FP32","shape":[1,2],"data":[0.5,1.5]},)"
                         R"({"name":"mask","datatype":"BOOL","shape":[1],"data":[true]}]})";
  const std::string q2 = R"({"inputs":[{"name":"pixels","datatype":"FP32","shape":[1,2],"data":[[2.5,3.5]]},)"
                         R"({"name":"mask","datatype":"BOOL","shape":[1],"data":[false]}]})";
  const V2TensorQuery t1 = read_v2_tensor_query(q1), t2 = read_v2_tensor_query(q2);
  REQUIRE_FALSE(t1.layout.empty());
  CHECK(t1.layout == t2.layout);  // nested or flat data: the same tensor
  const JsonValue req = parsed(encode_v2_tensor_request({t1, t2}));
  const auto& inputs = json_field(req, "inputs")->list_value();
  REQUIRE(inputs.values_size() == 2);
  const JsonValue& pixels = inputs.values(0);
  CHECK(json_string(pixels, "name") == "pixels");
  CHECK(json_string(pixels, "datatype") == "FP32");
  CHECK(json_text(*json_field(pixels, "shape")) == "[2,2]");
  CHECK(json_text(*json_field(pixels, "data")) == "[0.5,1.5,2.5,3.5]");
  CHECK(json_text(*json_field(inputs.values(1), "data")) == "[true,false]");
  // Other layouts, and what is not a tensor set of single rows, differ.
  CHECK(
      read_v2_tensor_query(R"({"inputs":[{"name":"pixels","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]})").layout !=
      t1.layout);
  CHECK(
      read_v2_tensor_query(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[2,1],"data":[1,2]}]})").layout.empty());
  CHECK(read_v2_tensor_query(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1]}]})").layout.empty());
  CHECK(read_v2_tensor_query(R"({"data":"aGk="})").layout.empty());
  CHECK(read_v2_tensor_query("raw image bytes").layout.empty());
}

TEST_CASE("v2 codec: an output's own parameters stay with each query's rows, null ones are none", "[v2]") {
  const auto out = decode_v2_infer_response(
      R"({"outputs":[{"name":"p","shape":[2,1],"datatype":"FP32","parameters":{"unit":"ms"},"data":[1,2]},)"
      R"({"name":"q","shape":[2],"datatype":"INT32","parameters":null,"data":[3,4]}]})",
      2);
  REQUIRE(out.size() == 2);
  CHECK(out[1] == R"({"outputs":[{"name":"p","datatype":"FP32","shape":[1,1],"parameters":{"unit":"ms"},"data":[2]},)"
                  R"({"name":"q","datatype":"INT32","shape":[1],"data":[4]}]})");
}

TEST_CASE("v2 codec: the binary form of a bytes batch is the JSON header, then length-prefixed raw bytes", "[v2]") {
  const std::string a("\xff\x00z", 3), b = "hi";
  size_t header = 0;
  const std::string body = encode_v2_bytes_binary_request({&a, &b}, "INPUT0", &header);
  const std::string json =
      R"({"inputs":[{"name":"INPUT0","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":13}}]})";
  CHECK(header == json.size());
  CHECK(body == json + std::string("\x03\x00\x00\x00\xff\x00z\x02\x00\x00\x00hi", 13));
}
