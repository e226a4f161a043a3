#include <catch2/catch.hpp>

#include "runtime/upstream/torchserve/batch_codec.h"

using namespace lull::torchserve;

TEST_CASE("batch request carries every input base64-encoded, in order", "[serve][codec]") {
  const std::string a = "foo", b = std::string("\0\xff", 2);
  CHECK(encode_batch_request({&a, &b}) == R"({"inputs":["Zm9v","AP8="]})");
}

TEST_CASE("batch response is split into each prediction's own text, in order", "[serve][codec]") {
  auto out = decode_batch_response(
      R"( {"model": "x", "predictions": [{"class":3,"score":0.5}, [1,{"a":"]}"}], "s\"t", -1.5e3, null] } )", 5);
  REQUIRE(out.size() == 5);
  CHECK(out[0] == R"({"class":3,"score":0.5})");
  CHECK(out[1] == R"([1,{"a":"]}"}])");
  CHECK(out[2] == R"("s\"t")");
  CHECK(out[3] == "-1.5e3");
  CHECK(out[4] == "null");
  CHECK(decode_batch_response(R"({"predictions":[]})", 0).empty());
}

TEST_CASE("batch responses that break the contract are refused", "[serve][codec]") {
  CHECK_THROWS_WITH(decode_batch_response("not json", 1), Catch::Contains("not the contract's JSON"));
  CHECK_THROWS_WITH(decode_batch_response(R"({"predictions":[1,)", 2), Catch::Contains("not the contract's JSON"));
  CHECK_THROWS_WITH(decode_batch_response(R"({"predictions":[1]} x)", 1), Catch::Contains("trailing"));
  CHECK_THROWS_WITH(decode_batch_response(R"({"outputs":[1]})", 1), Catch::Contains("no \"predictions\""));
  CHECK_THROWS_WITH(decode_batch_response(R"({"predictions":{}})", 1), Catch::Contains("to be a list"));
  CHECK_THROWS_WITH(decode_batch_response(R"({"predictions":[1,2]})", 3), Catch::Contains("2 predictions for 3"));
}

TEST_CASE("per-input errors are told apart from predictions and keep TorchServe's shape", "[serve][codec]") {
  std::string err;
  CHECK(input_error_status(R"({"class":3,"score":0.5})", &err) == 0);
  CHECK(input_error_status(R"({"error_rate":0.1})", &err) == 0);       // a key that merely starts alike
  CHECK(input_error_status(R"({"error":"x","class":1})", &err) == 0);  // not the error object
  CHECK(input_error_status(R"(["error"])", &err) == 0);
  CHECK(err.empty());
  CHECK(input_error_status(R"( {"error": {"code": 422, "type": "InvalidInput", "message": "bad"}} )", &err) == 422);
  CHECK(err == R"({"code": 422, "type": "InvalidInput", "message": "bad"})");
  CHECK(input_error_status(R"({"error":{"type":"X","message":"no code"}})", &err) == 400);
  CHECK(input_error_status(R"({"error":{"code":200,"message":"not an error code"}})", &err) == 400);

  auto preds = decode_batch_response(
      R"({"predictions":[{"class":1},{"error":{"code":400,"type":"InvalidInput","message":"input 1: bad"}},{"class":2}]})",
      3);
  const auto status = take_input_errors(preds);
  CHECK(status == std::vector<int>{0, 400, 0});
  CHECK(preds[0] == R"({"class":1})");
  CHECK(preds[1] == R"({"code":400,"type":"InvalidInput","message":"input 1: bad"})");
  CHECK(preds[2] == R"({"class":2})");
  auto clean = decode_batch_response(R"({"predictions":[1,2]})", 2);
  CHECK(take_input_errors(clean).empty());
}
