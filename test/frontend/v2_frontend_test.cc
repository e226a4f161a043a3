// The Open Inference Protocol (KServe v2) on lull's front end: requests
// checked as the protocol describes them (its error form, 4xx, and the
// service never reached), one query per request, the answer in v2 form
// naming the model that served it; health and metadata; TorchServe's routes
// unchanged beside them. Raw bytes on the socket (curl-style) and curl itself.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "runtime/net/base64.h"
#include "runtime/net/http_client.h"
#include "runtime/frontend/frontend.h"
#include "runtime/net/content_encoding.h"
#include "runtime/frontend/v2_front_codec.h"
#include "test/frontend/raw_http_client.h"
#include "test/support/skip.h"

using namespace lull::serve;
using namespace lull::frontend;
using namespace lull::net;

namespace {

V2InferRequest parse_ok(const std::string& body) {
  V2InferRequest r;
  std::string error;
  INFO(body);
  CHECK(parse_v2_infer_request(body, &r, &error));
  CHECK(error.empty());
  return r;
}

std::string parse_error(const std::string& body) {
  V2InferRequest r;
  std::string error;
  INFO(body);
  CHECK_FALSE(parse_v2_infer_request(body, &r, &error));
  CHECK_FALSE(error.empty());
  return error;
}

}  // namespace

TEST_CASE("v2 codec: one BYTES element is the query's bytes, as the TorchServe route's", "[serve][v2]") {
  auto r = parse_ok(
      R"({"id": "42", "inputs": [{"name": "text", "shape": [1], "datatype": "BYTES", "data": ["hello world"]}]})");
  REQUIRE(r.queries.size() == 1);
  CHECK(r.queries[0] == "hello world");
  CHECK(r.has_id);
  CHECK(r.id == "42");
  const std::string png = std::string("\x89PNG\r\n\x1a\n\0\xff", 10);
  auto b = parse_ok(R"({"inputs": [{"name": "img", "shape": [1, 1], "datatype": "BYTES",
                       "parameters": {"content_type": "base64"}, "data": [[")" +
                    base64_encode(png) + R"("]]}]})");
  CHECK(b.queries == std::vector<std::string>{png});
  CHECK_FALSE(b.has_id);
}

TEST_CASE("v2 codec: tensor inputs go to the model as their own JSON, a query per row", "[serve][v2]") {
  // The specification's two-input example with its BOOL shape made to share the batch dimension.
  auto r = parse_ok(R"({"id": "42", "inputs": [
      {"name": "input0", "shape": [2, 2], "datatype": "UINT32", "data": [1, 2, 3, 4]},
      {"name": "input1", "shape": [2], "datatype": "BOOL", "data": [true, false]}],
      "outputs": [{"name": "output0"}]})");
  CHECK(r.queries ==
        std::vector<std::string>{R"({"inputs":[{"name":"input0","datatype":"UINT32","shape":[1,2],"data":[1,2]},)"
                                 R"({"name":"input1","datatype":"BOOL","shape":[1],"data":[true]}]})",
                                 R"({"inputs":[{"name":"input0","datatype":"UINT32","shape":[1,2],"data":[3,4]},)"
                                 R"({"name":"input1","datatype":"BOOL","shape":[1],"data":[false]}]})"});
  auto nested =
      parse_ok(R"({"inputs": [{"name": "x", "shape": [1, 2, 2], "datatype": "FP32", "data": [[[1.5, 2], [4, 5]]]}]})");
  CHECK(nested.queries ==
        std::vector<std::string>{R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2,2],"data":[1.5,2,4,5]}]})"});
  // [4, 3] FP32: four queries of one row each; a 1-D [4]: four of one element.
  auto four = parse_ok(R"({"inputs": [{"name": "x", "shape": [4, 3], "datatype": "FP32",
                          "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}]})");
  REQUIRE(four.queries.size() == 4);
  CHECK(four.queries[3] == R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,3],"data":[10,11,12]}]})");
  auto flat = parse_ok(R"({"inputs": [{"name": "x", "shape": [4], "datatype": "INT32", "data": [1, 2, 3, 4]}]})");
  REQUIRE(flat.queries.size() == 4);
  CHECK(flat.queries[1] == R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1],"data":[2]}]})");
  // BYTES [2]: two queries, each its element's bytes (as [1] is one).
  auto two_strings = parse_ok(R"({"inputs": [{"name": "t", "shape": [2], "datatype": "BYTES", "data": ["a", "b"]}]})");
  CHECK(two_strings.queries == std::vector<std::string>{"a", "b"});
  auto two_rows =
      parse_ok(R"({"inputs": [{"name": "t", "shape": [2, 1], "datatype": "BYTES", "data": [["a"], ["b"]]}]})");
  CHECK(two_rows.queries == std::vector<std::string>{"a", "b"});
  // BYTES rows of several elements are tensors.
  auto bytes_rows =
      parse_ok(R"({"inputs": [{"name": "t", "shape": [2, 2], "datatype": "BYTES", "data": ["a", "b", "c", "d"]}]})");
  CHECK(bytes_rows.queries[1] == R"({"inputs":[{"name":"t","datatype":"BYTES","shape":[1,2],"data":["c","d"]}]})");
}

TEST_CASE("v2 codec: inputs without a common batch dimension are refused, saying what is accepted", "[serve][v2]") {
  // The specification's example as it is: [2, 2] beside [1].
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "input0", "shape": [2, 2], "datatype": "UINT32", "data": [1, 2, 3, 4]},
                                         {"name": "input1", "shape": [1], "datatype": "BOOL", "data": [true]}]})"),
             Catch::Contains("inputs[1] (input1): leading dimension 1 where inputs[0] (input0) has 2; lull takes each "
                             "input as [B, ...] with the same B"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [], "datatype": "FP32", "data": [1]}]})"),
             Catch::Contains("shape [] (a scalar) has no batch dimension"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [0, 3], "datatype": "FP32", "data": []}]})"),
             Catch::Contains("the leading dimension is 0"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [5000], "datatype": "UINT8", "data": [)" +
                         [] {
                           std::string d;
                           for (int i = 0; i < 5000; ++i) d += i ? ",1" : "1";
                           return d;
                         }() +
                         "]}]}"),
             Catch::Contains("a batch of 5000 rows; at most 4096 per request"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "t", "shape": [2], "datatype": "BYTES", "data": ["a", ""]}]})"),
             Catch::Contains("the element is empty (row 1)"));
}

TEST_CASE("v2 codec: a batch's answers are stacked in row order", "[serve][v2]") {
  V2InferRequest req;
  req.id = "9";
  req.has_id = true;
  std::string body, error;
  REQUIRE(v2_infer_batch_response({"m", "m"}, "t", req, {R"({"class":1})", R"({"class":2})"}, &body, &error));
  CHECK(body ==
        R"({"model_name":"m","id":"9","parameters":{"lull_task":"t"},)"
        R"("outputs":[{"name":"output","datatype":"BYTES","shape":[2],"data":["{\"class\":1}","{\"class\":2}"]}]})");
  req.has_id = false;
  const std::string row0 = R"({"outputs":[{"name":"y","datatype":"FP32","shape":[1,2],"data":[[1,2]]}]})";
  const std::string row1 = R"({"outputs":[{"name":"y","datatype":"FP32","shape":[1,2],"data":[3.5,4]}]})";
  REQUIRE(v2_infer_batch_response({"a", "b"}, "t", req, {row0, row1}, &body, &error));
  CHECK(body == R"({"model_name":"a","parameters":{"lull_task":"t","lull_models":["a","b"]},)"
                R"("outputs":[{"name":"y","datatype":"FP32","shape":[2,2],"data":[1,2,3.5,4]}]})");
  const std::string other = R"({"outputs":[{"name":"y","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]})";
  CHECK_FALSE(v2_infer_batch_response({"a", "b"}, "t", req, {row0, other}, &body, &error));
  CHECK_THAT(error, Catch::Contains("row 1 (b) answered outputs unlike row 0's"));
  CHECK_FALSE(v2_infer_batch_response({"a", "b"}, "t", req, {row0, R"({"class":1})"}, &body, &error));
}

TEST_CASE("v2 codec: bad requests are named in one line", "[serve][v2]") {
  // The specification's own example gives BOOL shape [3] with one element: refused as a shape mismatch.
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "input1", "shape": [3], "datatype": "BOOL", "data": [true]}]})"),
             Catch::Contains("shape [3] holds 3 elements but data has 1"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [2], "datatype": "FP33", "data": [1, 2]}]})"),
             Catch::Contains("'FP33' is not one of the protocol's"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [2], "datatype": "FP32", "data": [1, "2"]}]})"),
             Catch::Contains("element 1 (\"2\") is not a number in range of FP32"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "UINT8", "data": [300]}]})"),
             Catch::Contains("not an integer in range of UINT8"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "INT32", "data": [1.5]}]})"),
             Catch::Contains("not an integer"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "BYTES", "data": [7]}]})"),
             Catch::Contains("not a string"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "BOOL", "data": [1]}]})"),
             Catch::Contains("not a boolean"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [-1], "datatype": "FP32", "data": [1]}]})"),
             Catch::Contains("not a count"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "datatype": "FP32", "data": [1]}]})"),
             Catch::Contains("inputs[0] (x).shape: missing"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32"}]})"),
             Catch::Contains("inputs[0] (x).data: missing"));
  CHECK_THAT(parse_error(R"({"inputs": [{"shape": [1], "datatype": "FP32", "data": [1]}]})"),
             Catch::Contains("inputs[0].name: missing"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1]},
                                         {"name": "x", "shape": [1], "datatype": "FP32", "data": [2]}]})"),
             Catch::Contains("a second input of this name"));
  CHECK_THAT(parse_error(R"({"id": "1"})"), Catch::Contains("inputs: missing or empty"));
  CHECK_THAT(parse_error(R"({"inputs": []})"), Catch::Contains("inputs: missing or empty"));
  CHECK_THAT(parse_error(R"({"id": 5, "inputs": []})"), Catch::Contains("id: not a string"));
  CHECK_THAT(parse_error("[1, 2]"), Catch::Contains("not a JSON object"));
  CHECK_THAT(parse_error("{nope"), Catch::Contains("not valid JSON"));
  CHECK_THAT(parse_error(std::string(100000, '[')), Catch::Contains("nested deeper"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "BYTES", "data": [""]}]})"),
             Catch::Contains("the element is empty"));
  CHECK_THAT(parse_error(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "BYTES",
                                         "parameters": {"content_type": "base64"}, "data": ["@@"]}]})"),
             Catch::Contains("not base64"));
  // Triton's binary tensor extension: a JSON header followed by raw bytes.
  CHECK_THAT(parse_error(std::string(R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32",
                                         "parameters": {"binary_data_size": 4}}]})") +
                         "\x01\x02\x03\x04"),
             Catch::Contains("binary tensors need the Inference-Header-Content-Length header"));
}

namespace {

std::string le32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string fp32s(std::initializer_list<float> values) {
  std::string s;
  for (float f : values) s.append(reinterpret_cast<const char*>(&f), 4);
  return s;
}

}  // namespace

TEST_CASE("v2 codec: the binary tensor extension (Inference-Header-Content-Length), as Triton's client sends it",
          "[serve][v2]") {
  // An image: bytes that are not UTF-8 (the JSON path cannot carry them), one BYTES element.
  const std::string image = std::string("\x89PNG\r\n\x1a\n\0\xff\xfe", 11);
  const std::string head =
      R"({"inputs":[{"name":"input","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":15}}],)"
      R"("parameters":{"binary_data_output":true}})";
  V2InferRequest r;
  std::string error;
  REQUIRE(parse_v2_infer_request(head + le32(11) + image, &r, &error, std::to_string(head.size())));
  CHECK(r.queries == std::vector<std::string>{image});
  // [4, 3] FP32 raw: four rows; [2] BYTES: two queries.
  const std::string t =
      R"({"inputs":[{"name":"x","shape":[4,3],"datatype":"FP32","parameters":{"binary_data_size":48}}]})";
  REQUIRE(parse_v2_infer_request(t + fp32s({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12.5}), &r, &error,
                                 std::to_string(t.size())));
  REQUIRE(r.queries.size() == 4);
  CHECK(r.queries[3] == R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,3],"data":[10,11,12.5]}]})");
  const std::string b =
      R"({"inputs":[{"name":"t","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":11}}]})";
  REQUIRE(parse_v2_infer_request(b + le32(2) + "hi" + le32(1) + "x", &r, &error, std::to_string(b.size())));
  CHECK(r.queries == std::vector<std::string>{"hi", "x"});
  // A JSON input beside a binary one.
  const std::string mixed = R"({"inputs":[{"name":"a","shape":[1,1],"datatype":"INT32","data":[7]},)"
                            R"({"name":"b","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  REQUIRE(parse_v2_infer_request(mixed + fp32s({0.5, 1}), &r, &error, std::to_string(mixed.size())));
  CHECK(r.queries[0] == R"({"inputs":[{"name":"a","datatype":"INT32","shape":[1,1],"data":[7]},)"
                        R"({"name":"b","datatype":"FP32","shape":[1,2],"data":[0.5,1]}]})");
  const auto refused = [&](const std::string& body, const std::string& header) {
    V2InferRequest x;
    std::string why;
    CHECK_FALSE(parse_v2_infer_request(body, &x, &why, header));
    CHECK(why.find('\n') == std::string::npos);
    return why;
  };
  CHECK_THAT(refused(t + fp32s({1, 2}), std::to_string(t.size())), Catch::Contains("runs past the body's binary part"));
  CHECK_THAT(refused(t + fp32s({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}), std::to_string(t.size())),
             Catch::Contains("4 bytes past the inputs' binary_data_size"));
  CHECK_THAT(refused(head + le32(99) + image, std::to_string(head.size())),
             Catch::Contains("runs past its binary_data_size"));
  CHECK_THAT(refused(head, "100000"), Catch::Contains("is not a length within the body's"));
  CHECK_THAT(refused(head, "-1"), Catch::Contains("is not a length"));
  const std::string odd =
      R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","parameters":{"binary_data_size":3}}]})";
  CHECK_THAT(refused(odd + "abc", std::to_string(odd.size())), Catch::Contains("not a whole number of FP32 elements"));
  // Not UTF-8 inside a row of several BYTES elements: no JSON can carry it on.
  const std::string rows =
      R"({"inputs":[{"name":"t","shape":[1,2],"datatype":"BYTES","parameters":{"binary_data_size":10}}]})";
  CHECK_THAT(refused(rows + le32(1) + "\xff" + le32(1) + "a", std::to_string(rows.size())),
             Catch::Contains("not UTF-8 can only be a row's one element"));
}

TEST_CASE("v2 codec: BF16 as JSON and binary (the high half of an FP32)", "[serve][v2]") {
  const V2InferRequest j = parse_ok(R"({"inputs":[{"name":"x","shape":[1,2],"datatype":"BF16","data":[1.5,-2]}]})");
  CHECK(j.queries ==
        std::vector<std::string>{R"({"inputs":[{"name":"x","datatype":"BF16","shape":[1,2],"data":[1.5,-2]}]})"});
  const std::string t =
      R"({"inputs":[{"name":"x","shape":[1,2],"datatype":"BF16","parameters":{"binary_data_size":4}}]})";
  V2InferRequest r;
  std::string error;
  // 1.5 is 0x3FC0, -2 is 0xC000 (little-endian on the wire).
  REQUIRE(parse_v2_infer_request(t + std::string("\xC0\x3F\x00\xC0", 4), &r, &error, std::to_string(t.size())));
  CHECK(r.queries == j.queries);
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","shape":[1],"datatype":"BF16","data":[1e39]}]})"),
             Catch::Contains("x"));
}

TEST_CASE("v2 codec: requested outputs are kept in the order asked, an unknown one is named", "[serve][v2]") {
  V2InferRequest req = parse_ok(R"({"inputs":[{"name":"input","shape":[1],"datatype":"BYTES","data":["a"]}],)"
                                R"("outputs":[{"name":"b"},{"name":"a"}]})");
  CHECK(req.outputs == std::vector<std::string>{"b", "a"});
  const std::string answered =
      v2_infer_response("m", "t", req,
                        R"({"outputs":[{"name":"a","datatype":"INT32","shape":[1],"data":[1]},)"
                        R"({"name":"b","datatype":"INT32","shape":[1],"data":[2]},)"
                        R"({"name":"c","datatype":"INT32","shape":[1],"data":[3]}]})");
  std::string body = answered, error;
  REQUIRE(select_v2_outputs(req, &body, &error));
  CHECK(body.find(R"("outputs":[{)") != std::string::npos);
  CHECK(body.find(R"("name":"b")") < body.find(R"("name":"a")"));
  CHECK(body.find(R"("name":"c")") == std::string::npos);
  CHECK(body.find(R"("model_name":"m")") != std::string::npos);
  req.outputs = {"a", "nope"};
  body = answered;
  CHECK_FALSE(select_v2_outputs(req, &body, &error));
  CHECK(error == "outputs: 'nope' is not an output of model m; it answers: a, b, c");
  // A plain prediction is the one output "output".
  req.outputs = {"output"};
  body = v2_infer_response("m", "t", req, R"({"class":1})");
  CHECK(select_v2_outputs(req, &body, &error));
  req.outputs.clear();  // none asked: the answer as it was
  body = answered;
  CHECK(select_v2_outputs(req, &body, &error));
  CHECK(body == answered);
}

TEST_CASE("v2 codec: empty lists inside data hold no element, wherever they are", "[serve][v2]") {
  // An empty list first in data while the element count is 1 crashed lull serve (SIGSEGV).
  CHECK(parse_ok(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[[],"hello"]}]})").queries[0] ==
        "hello");
  CHECK(parse_ok(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[[[]],[[],["hi"]]]}]})").queries[0] ==
        "hi");
  CHECK(parse_ok(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1,1],"data":[[],[],["a"],[]]}]})").queries[0] ==
        "a");
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[[],[]]}]})"),
             Catch::Contains("holds 1 elements but data has 0"));
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[[[[]]]]}]})"),
             Catch::Contains("holds 1 elements but data has 0"));
}

TEST_CASE("v2 codec: a refusal is one line, whatever the request's names hold", "[serve][v2]") {
  // Found by fuzz_v2_request: a name holding an escaped newline split the message.
  const std::string error = parse_error(R"({"inputs":[{"name":"a\nb","datatype":"INT8","shape":[1],"data":[1000]}]})");
  CHECK(error.find('\n') == std::string::npos);
  CHECK_THAT(error, Catch::Contains("(a\\nb)"));
}

TEST_CASE("v2 codec: shape products in checked arithmetic, integer limits exact", "[serve][v2]") {
  // 2^40 x 2^24 wrapped to 0 and matched an empty data list.
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1099511627776,16777216],"data":[]}]})"),
             Catch::Contains("is too large"));
  // 3037000500^2 overflowed int64 into a negative count.
  const std::string big =
      parse_error(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[3037000500,3037000500],"data":[1]}]})");
  CHECK_THAT(big, Catch::Contains("is too large"));
  CHECK_THAT(big, !Catch::Contains("-"));
  // A zero dimension anywhere makes an empty tensor, however large the others.
  CHECK(parse_ok(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,1099511627776,0],"data":[]},)"
                 R"({"name":"y","datatype":"FP32","shape":[1],"data":[1]}]})")
            .queries[0]
            .find("\"y\"") != std::string::npos);
  // 2^64 is no 64-bit integer: the parser refuses it, as it does 1e400.
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"UINT64","shape":[1],"data":[18446744073709551616]}]})"),
             Catch::Contains("a number that is neither a 64-bit integer nor a finite double"));
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"FP64","shape":[1],"data":[1e400]}]})"),
             Catch::Contains("a number that is neither a 64-bit integer nor a finite double"));
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"INT64","shape":[1],"data":[-9223372036854775809]}]})"),
             Catch::Contains("a number that is neither a 64-bit integer nor a finite double"));
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"UINT64","shape":[1],"data":[-1]}]})"),
             Catch::Contains("not an integer in range of UINT64"));
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"INT8","shape":[1],"data":[-129]}]})"),
             Catch::Contains("not an integer in range of INT8"));
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"INT64","shape":[1],"data":[9223372036854775808]}]})"),
             Catch::Contains("not an integer in range of INT64"));
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"UINT8","shape":[1],"data":[256]}]})"),
             Catch::Contains("not an integer in range of UINT8"));
  parse_ok(R"({"inputs":[{"name":"x","datatype":"UINT8","shape":[2],"data":[0,255]}]})");
  parse_ok(
      R"({"inputs":[{"name":"x","datatype":"INT64","shape":[2],"data":[-9223372036854775808,4611686018427387904]}]})");
}

TEST_CASE("v2 codec: 64-bit integers pass exactly, to their limits", "[serve][v2]") {
  // Through doubles, 2^64 - 1 rounded to 2^64 (refused) and 2^53 + 1 to 2^53.
  CHECK(
      parse_ok(R"({"inputs":[{"name":"x","datatype":"UINT64","shape":[1,3],)"
               R"("data":[18446744073709551615,0,9007199254740993]}]})")
          .queries[0] ==
      R"({"inputs":[{"name":"x","datatype":"UINT64","shape":[1,3],"data":[18446744073709551615,0,9007199254740993]}]})");
  CHECK(
      parse_ok(R"({"inputs":[{"name":"x","datatype":"INT64","shape":[1,2],)"
               R"("data":[-9223372036854775808,9223372036854775807]}]})")
          .queries[0] ==
      R"({"inputs":[{"name":"x","datatype":"INT64","shape":[1,2],"data":[-9223372036854775808,9223372036854775807]}]})");
  // A whole number written with a fraction or an exponent is an integer; it goes on as one.
  CHECK(parse_ok(R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1,2],"data":[2.0,1e3]}]})").queries[0] ==
        R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1,2],"data":[2,1000]}]})");
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"UINT64","shape":[1],"data":[1.8446744073709552e19]}]})"),
             Catch::Contains("not an integer in range of UINT64"));
  // Floats in their shortest form that reads back the same.
  CHECK(parse_ok(R"({"inputs":[{"name":"x","datatype":"FP64","shape":[1,3],"data":[0.1,-2.5e-300,3]}]})").queries[0] ==
        R"({"inputs":[{"name":"x","datatype":"FP64","shape":[1,3],"data":[0.1,-2.5e-300,3]}]})");
  CHECK_THAT(parse_error(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1e39]}]})"),
             Catch::Contains("not a number in range of FP32"));
}

TEST_CASE("v2 codec: a request's cost is linear in its body (a 3.8 MB body decodes in one pass)", "[serve][v2]") {
  // 66,000 inputs, and one tensor of 1.9 M elements: the shapes that cost
  // ~1.5 CPU-seconds each through protobuf's reflection. The checks here are
  // of the result; the time is measured by bench (docs/benchmarks.md).
  std::string many = R"({"inputs":[)";
  for (int i = 0; i < 66000; ++i)
    many += (i ? "," : "") + std::string(R"({"name":"i)") + std::to_string(i) +
            R"(","datatype":"INT8","shape":[1],"data":[1]})";
  many += "]}";
  const auto a = parse_ok(many);
  REQUIRE(a.queries.size() == 1);
  CHECK(a.queries[0].find(R"({"name":"i65999","datatype":"INT8","shape":[1],"data":[1]})") != std::string::npos);
  std::string big = R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,1900000],"data":[)";
  for (int i = 0; i < 1900000; ++i) big += i ? ",1" : "1";
  big += "]}]}";
  CHECK(big.size() > 3800000);
  const auto b = parse_ok(big);
  REQUIRE(b.queries.size() == 1);
  CHECK(b.queries[0] == big);  // one row: the same tensor, written the same way
}

TEST_CASE("v2 codec: the answer names the model, echoes the id, and wraps or passes outputs", "[serve][v2]") {
  V2InferRequest req;
  req.id = "7";
  req.has_id = true;
  CHECK(v2_infer_response("resnet18", "classify", req, R"({"class":3})") ==
        R"({"model_name":"resnet18","id":"7","parameters":{"lull_task":"classify"},)"
        R"("outputs":[{"name":"output","datatype":"BYTES","shape":[1],"data":["{\"class\":3}"]}]})");
  req.has_id = false;
  const std::string tensors = R"( {"outputs": [{"name":"logits","datatype":"FP32","shape":[1,2],"data":[0.5,1.5]}] } )";
  CHECK(
      v2_infer_response("m", "t", req, tensors) ==
      R"({"model_name":"m","parameters":{"lull_task":"t"},"outputs":[{"name":"logits","datatype":"FP32","shape":[1,2],"data":[0.5,1.5]}]})");
  // An object with more than "outputs" is a prediction like any other.
  CHECK(v2_infer_response("m", "t", req, R"({"outputs":[],"x":1})").find(R"("data":["{\"outputs\":[],\"x\":1}"])") !=
        std::string::npos);
  CHECK(v2_error_body("bad \"x\"") == R"({"error":"bad \"x\""})");
  CHECK(torchserve_error_message(R"({"code":400,"type":"InvalidInput","message":"not an image"})") == "not an image");
}

namespace {

// Echoes the input's length and keeps the last input; 503 with Retry-After
// for "overload", the model's own error for "reject".
class V2EchoService final : public QueryService {
 public:
  Answer serve(std::string input) override {
    ++served;
    {
      std::lock_guard<std::mutex> lock(mu);
      last = input;
    }
    Answer a;
    if (input == "overload") {
      a.http_status = 503;
      a.body = "overloaded";
      a.retry_after_s = 2;
      return a;
    }
    if (input == "reject") {
      a.http_status = 400;
      a.body = R"({"code":400,"type":"InvalidInput","message":"not a decodable image"})";
      a.error_is_json = true;
      a.model = "tiny";
      return a;
    }
    a.body = "{\"len\":" + std::to_string(input.size()) + "}";
    a.model = "tiny";
    a.worker = 0;
    return a;
  }
  std::string metrics_text() override { return ""; }
  bool healthy() override { return up; }
  std::string last_input() {
    std::lock_guard<std::mutex> lock(mu);
    return last;
  }
  std::atomic<int> served{0};
  std::atomic<bool> up{true};
  std::mutex mu;
  std::string last;
};

struct V2Frontend {
  static FrontendOptions options() {
    FrontendOptions o;
    o.port = 0;
    o.task = "classify";
    return o;
  }
  V2Frontend() { fe.start(); }
  V2EchoService service;
  Frontend fe{service, options()};
};

// One request as curl would send it, on its own connection; the raw answer.
std::string raw_request(int port, const std::string& method, const std::string& path, const std::string& body = "",
                        const std::string& content_type = "application/json") {
  testing::RawConnection c(port);
  REQUIRE(c.connected());
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n";
  if (!body.empty() || method == "POST")
    req += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  REQUIRE(c.send(req + "\r\n" + body));
  return c.read_response();
}

int status_of(const std::string& response) {
  return response.size() > 12 ? std::atoi(response.substr(9, 3).c_str()) : 0;
}

std::string body_of(const std::string& response) {
  const auto end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

}  // namespace

TEST_CASE("v2 front end: health, readiness and metadata", "[serve][frontend][v2]") {
  V2Frontend v2;
  const int port = v2.fe.port();
  auto live = raw_request(port, "GET", "/v2/health/live");
  CHECK(status_of(live) == 200);
  CHECK(body_of(live) == R"({"live":true})");
  CHECK(body_of(raw_request(port, "GET", "/v2/health/ready")) == R"({"ready":true})");
  CHECK(body_of(raw_request(port, "GET", "/v2/models/classify/ready")) == R"({"name":"classify","ready":true})");
  CHECK(status_of(raw_request(port, "GET", "/v2/models/classify/versions/3/ready")) == 200);
  v2.service.up = false;  // no worker can serve: not ready, still live
  auto not_ready = raw_request(port, "GET", "/v2/health/ready");
  CHECK(status_of(not_ready) == 503);
  CHECK(body_of(not_ready) == R"({"ready":false})");
  CHECK(status_of(raw_request(port, "GET", "/v2/models/classify/ready")) == 503);
  CHECK(status_of(raw_request(port, "GET", "/v2/health/live")) == 200);
  v2.service.up = true;
  auto unknown = raw_request(port, "GET", "/v2/models/other/ready");
  CHECK(status_of(unknown) == 404);
  CHECK(body_of(unknown).rfind(R"({"error":"unknown model 'other')", 0) == 0);
  auto meta = body_of(raw_request(port, "GET", "/v2/models/classify"));
  CHECK(meta.find(R"("name":"classify")") != std::string::npos);
  CHECK(meta.find(R"("inputs":[{"name":"input","datatype":"BYTES","shape":[-1]}])") != std::string::npos);
  CHECK(status_of(raw_request(port, "GET", "/v2/models/classify/versions/1")) == 200);
  CHECK(body_of(raw_request(port, "GET", "/v2")).rfind(R"({"name":"lull","version":)", 0) == 0);
  CHECK(body_of(raw_request(port, "GET", "/v2")).find(R"("extensions":["binary_tensor_data"])") != std::string::npos);
  CHECK(status_of(raw_request(port, "GET", "/v2/models/classify/explain")) == 404);
  CHECK(status_of(raw_request(port, "POST", "/v2/health/ready")) == 405);
  CHECK(body_of(raw_request(port, "GET", "/v2/nothing")).rfind(R"({"error":)", 0) == 0);
  CHECK(v2.service.served == 0);
}

TEST_CASE("v2 front end: an inference request is one query, answered in v2 form", "[serve][frontend][v2]") {
  V2Frontend v2;
  const int port = v2.fe.port();
  const std::string text =
      R"({"id":"a1","inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["hello world"]}]})";
  for (const char* path : {"/v2/models/classify/infer", "/v2/models/classify/versions/2/infer"}) {
    auto r = raw_request(port, "POST", path, text);
    CHECK(status_of(r) == 200);
    CHECK(body_of(r) == R"({"model_name":"tiny","id":"a1","parameters":{"lull_task":"classify"},)"
                        R"("outputs":[{"name":"output","datatype":"BYTES","shape":[1],"data":["{\"len\":11}"]}]})");
    CHECK(r.find("X-Lull-Model: tiny") != std::string::npos);
    CHECK(v2.service.last_input() == "hello world");
  }
  CHECK(v2.service.served == 2);

  SECTION("an output the model does not answer: 400 naming it, as Triton answers") {
    auto r = raw_request(port, "POST", "/v2/models/classify/infer",
                         R"({"inputs":[{"name":"t","shape":[2],"datatype":"BYTES","data":["a","b"]}],)"
                         R"("outputs":[{"name":"nope"}]})");
    CHECK(status_of(r) == 400);
    CHECK(body_of(r) == R"({"error":"outputs: 'nope' is not an output of model tiny; it answers: output"})");
    r = raw_request(
        port, "POST", "/v2/models/classify/infer",
        R"({"inputs":[{"name":"t","shape":[1],"datatype":"BYTES","data":["a"]}],"outputs":[{"name":"output"}]})");
    CHECK(status_of(r) == 200);
  }
  SECTION("tensor inputs reach the service as their JSON") {
    auto r = raw_request(port, "POST", "/v2/models/classify/infer",
                         R"({"inputs":[{"name":"x","shape":[1,3],"datatype":"FP32","data":[0.5,1,2]}]})");
    CHECK(status_of(r) == 200);
    CHECK(v2.service.last_input() == R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,3],"data":[0.5,1,2]}]})");
  }
  SECTION("a client batch [B, ...]: B queries, answered in row order in one response") {
    auto r =
        raw_request(port, "POST", "/v2/models/classify/infer",
                    R"({"id":"b","inputs":[{"name":"t","shape":[3],"datatype":"BYTES","data":["a","bb","ccc"]}]})");
    CHECK(status_of(r) == 200);
    CHECK(body_of(r) ==
          R"({"model_name":"tiny","id":"b","parameters":{"lull_task":"classify"},"outputs":[{"name":)"
          R"("output","datatype":"BYTES","shape":[3],"data":["{\"len\":1}","{\"len\":2}","{\"len\":3}"]}]})");
    CHECK(v2.service.served == 5);
    auto tensors =
        raw_request(port, "POST", "/v2/models/classify/infer",
                    R"({"inputs":[{"name":"x","shape":[4,3],"datatype":"FP32","data":[1,2,3,4,5,6,7,8,9,10,11,12]}]})");
    CHECK(status_of(tensors) == 200);
    CHECK(body_of(tensors).find(R"("shape":[4],"data":[)") != std::string::npos);
    CHECK(v2.service.served == 9);
    // A row the model refuses fails the request (the protocol answers requests), naming the row.
    auto refused = raw_request(port, "POST", "/v2/models/classify/infer",
                               R"({"inputs":[{"name":"t","shape":[2],"datatype":"BYTES","data":["fine","reject"]}]})");
    CHECK(status_of(refused) == 400);
    CHECK(body_of(refused) == R"({"error":"row 1: not a decodable image"})");
  }
  SECTION("bad requests: the protocol's error form, 400, and the service never reached") {
    for (const std::string& bad :
         {std::string(R"({"inputs":[{"name":"x","shape":[2],"datatype":"FP32","data":[1]}]})"),    // shape mismatch
          std::string(R"({"inputs":[{"name":"x","shape":[1],"datatype":"FLOAT","data":[1]}]})"),   // wrong datatype
          std::string(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT8","data":["a"]}]})"),  // wrong element
          std::string(R"({"id":"1"})"),                                                            // missing inputs
          std::string("{nope")}) {
      auto r = raw_request(port, "POST", "/v2/models/classify/infer", bad);
      INFO(bad << " -> " << r);
      CHECK(status_of(r) == 400);
      CHECK(body_of(r).rfind(R"({"error":")", 0) == 0);
      CHECK(r.find("Content-Type: application/json") != std::string::npos);
    }
    CHECK(v2.service.served == 2);
  }
  SECTION("empty lists in data and overflowing shapes: answered, and the server stays up") {
    // The first of these killed lull serve (SIGSEGV) before the codec took the first element found.
    auto r = raw_request(port, "POST", "/v2/models/classify/infer",
                         R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[[],"hello"]}]})");
    CHECK(status_of(r) == 200);
    CHECK(v2.service.last_input() == "hello");
    for (const std::string& bad :
         {std::string(R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[1],"data":[[],[]]}]})"),
          std::string(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1099511627776,16777216],"data":[]}]})"),
          std::string(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[3037000500,3037000500],"data":[]}]})")}) {
      INFO(bad);
      CHECK(status_of(raw_request(port, "POST", "/v2/models/classify/infer", bad)) == 400);
    }
    CHECK(status_of(raw_request(port, "GET", "/ping")) == 200);
    CHECK(v2.service.served == 3);
  }
  SECTION("other refusals keep their status in the error form") {
    CHECK(status_of(raw_request(port, "POST", "/v2/models/other/infer", text)) == 404);
    CHECK(status_of(raw_request(port, "GET", "/v2/models/classify/infer")) == 405);
    auto busy = raw_request(port, "POST", "/v2/models/classify/infer",
                            R"({"inputs":[{"name":"t","shape":[1],"datatype":"BYTES","data":["overload"]}]})");
    CHECK(status_of(busy) == 503);
    CHECK(body_of(busy) == R"({"error":"overloaded"})");
    CHECK(busy.find("Retry-After: 2") != std::string::npos);
    auto rejected = raw_request(port, "POST", "/v2/models/classify/infer",
                                R"({"inputs":[{"name":"t","shape":[1],"datatype":"BYTES","data":["reject"]}]})");
    CHECK(status_of(rejected) == 400);
    CHECK(body_of(rejected) == R"({"error":"not a decodable image"})");
  }
  SECTION("TorchServe's routes are unchanged beside v2") {
    auto r = raw_request(port, "POST", "/predictions/classify", "hello world", "application/octet-stream");
    CHECK(status_of(r) == 200);
    CHECK(body_of(r) == R"({"len":11})");
    CHECK(status_of(raw_request(port, "GET", "/ping")) == 200);
  }
}

TEST_CASE("v2 front end: curl's own requests", "[serve][frontend][v2][curl]") {
  if (access("/usr/bin/curl", X_OK) != 0) {
    LULL_SKIP("/usr/bin/curl is not installed");
  }
  V2Frontend v2;
  const std::string base = "http://127.0.0.1:" + std::to_string(v2.fe.port());
  const auto curl = [](const std::string& args) {
    std::string out;
    FILE* p = popen(("/usr/bin/curl -s --max-time 10 -w ' %{http_code}' " + args).c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
  };
  CHECK(curl(base + "/v2/health/ready") == R"({"ready":true} 200)");
  CHECK(
      curl("-H 'Content-Type: application/json' -d '{\"inputs\":[{\"name\":\"t\",\"shape\":[1],\"datatype\":\"BYTES\","
           "\"data\":[\"abc\"]}]}' " +
           base + "/v2/models/classify/infer") ==
      R"({"model_name":"tiny","parameters":{"lull_task":"classify"},"outputs":[{"name":"output","datatype":"BYTES","shape":[1],"data":["{\"len\":3}"]}]} 200)");
  CHECK(curl("-d '{\"inputs\":[]}' " + base + "/v2/models/classify/infer")
            .find(R"x(inputs: missing or empty (the request needs at least one input tensor)"} 400)x") !=
        std::string::npos);
}

TEST_CASE("request bodies compressed with gzip or deflate are inflated, bounded", "[serve][v2]") {
  const std::string plain = R"({"inputs":[{"name":"t","shape":[1],"datatype":"BYTES","data":["hello"]}]})";
  const std::string gz = std::string(
      "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xab\x56\xca\xcc\x2b\x28\x2d\x29\x56\xb2\x8a\xae\x56\xca\x4b\xcc\x4d\x55"
      "\xb2\x52\x2a\x51\xd2\x51\x2a\xce\x48\x2c\x00\xb2\xa3\x0d\x63\x75\x94\x52\x12\x4b\x12\x4b\x2a\x41\x5c\x25\xa7\xc8"
      "\x10\xd7\x60\x25\x88\x10\x50\x56\x29\x23\x35\x27\x27\x5f\x29\xb6\x36\xb6\x16\x00\x95\x7b\xf7\x43\x49\x00\x00"
      "\x00",
      84);
  const std::string zl = std::string(
      "\x78\x9c\xab\x56\xca\xcc\x2b\x28\x2d\x29\x56\xb2\x8a\xae\x56\xca\x4b\xcc\x4d\x55\xb2\x52\x2a\x51\xd2\x51\x2a\xce"
      "\x48\x2c\x00\xb2\xa3\x0d\x63\x75\x94\x52\x12\x4b\x12\x4b\x2a\x41\x5c\x25\xa7\xc8\x10\xd7\x60\x25\x88\x10\x50\x56"
      "\x29\x23\x35\x27\x27\x5f\x29\xb6\x36\xb6\x16\x00\x65\x46\x17\x6a",
      72);
  std::string out, error;
  CHECK(lull::net::inflate_body("gzip", gz, 1 << 20, &out, &error) == lull::net::InflateResult::kOk);
  CHECK(out == plain);
  CHECK(lull::net::inflate_body(" Deflate", zl, 1 << 20, &out, &error) == lull::net::InflateResult::kOk);
  CHECK(out == plain);
  CHECK(lull::net::inflate_body("identity", plain, 1 << 20, &out, &error) == lull::net::InflateResult::kOk);
  CHECK(out == plain);
  CHECK(lull::net::inflate_body("gzip", gz, 10, &out, &error) == lull::net::InflateResult::kTooLarge);
  CHECK_THAT(error, Catch::Contains("inflates past 10 bytes"));
  CHECK(lull::net::inflate_body("gzip", gz.substr(0, 40), 1 << 20, &out, &error) == lull::net::InflateResult::kCorrupt);
  CHECK(lull::net::inflate_body("gzip", plain, 1 << 20, &out, &error) == lull::net::InflateResult::kCorrupt);
  CHECK(lull::net::inflate_body("br", gz, 1 << 20, &out, &error) == lull::net::InflateResult::kUnsupported);
  CHECK_THAT(error, Catch::Contains("'br' is not supported (gzip, deflate, identity)"));
}
