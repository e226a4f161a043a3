// The request-body readers the front end uses instead of a general JSON
// parser and httplib's form parsing: the bounded {"data"} reader and the
// multipart field reader.
#include <catch2/catch.hpp>

#include <string>

#include "runtime/net/json_data_field.h"
#include "runtime/net/multipart_form.h"

using namespace lull::net;

TEST_CASE("json data field: the top-level string \"data\", unescaped", "[serve][json]") {
  auto j =
      read_json_data_field(R"( {"other": [1, {"data": "inner"}, -2.5e3, true, null], "data": "aGk\/PQ==\u0041"} )");
  CHECK(j.valid_json);
  CHECK(j.is_object);
  REQUIRE(j.data);
  CHECK(*j.data == "aGk/PQ==A");
  CHECK_FALSE(read_json_data_field(R"({"data": 5})").data);
  CHECK_FALSE(read_json_data_field(R"({"x": "y"})").data);
  CHECK_FALSE(read_json_data_field(R"(["data"])").is_object);
  CHECK(read_json_data_field(R"(["data"])").valid_json);
}

TEST_CASE("json data field: malformed and too-deep bodies are refused in one pass", "[serve][json]") {
  for (const char* bad : {"{nope", "{\"data\": \"x\"", "{\"data\": \"x\"} trailing", "{\"a\":01x}", "[1,]", "\"\\q\"",
                          "{\"data\":\"x\",}", ""}) {
    INFO(bad);
    CHECK_FALSE(read_json_data_field(bad).valid_json);
  }
  std::string ok_depth(kMaxJsonDepth, '[');
  ok_depth += std::string(kMaxJsonDepth, ']');
  CHECK(read_json_data_field(ok_depth).valid_json);
  const auto deep = read_json_data_field(std::string(1'000'000, '['));  // before: seconds of CPU at 10,000
  CHECK_FALSE(deep.valid_json);
  CHECK(deep.too_deep);
  std::string nested_objects;
  for (int i = 0; i < 100; ++i) nested_objects += "{\"a\":";
  const auto deep_object = read_json_data_field(nested_objects);
  CHECK(deep_object.too_deep);
}

TEST_CASE("multipart field: the named part's bytes, in any position", "[serve][multipart]") {
  const std::string ct = "multipart/form-data; boundary=\"XyZ\"";
  CHECK(is_multipart_form(ct));
  CHECK(is_multipart_form("Multipart/Form-Data;boundary=a"));
  CHECK_FALSE(is_multipart_form("application/json"));
  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nnot this\r\n"
      "--XyZ\r\ncontent-disposition: form-data; name=\"data\"; filename=\"img.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
      "bytes\r\n-XyZ with\r\n\r\n inside\r\n--XyZ--\r\n";
  auto data = multipart_field(ct, body, "data");
  REQUIRE(data);
  CHECK(*data == "bytes\r\n-XyZ with\r\n\r\n inside");
  CHECK(*multipart_field(ct, body, "file") == "not this");
  CHECK_FALSE(multipart_field(ct, body, "body"));
  CHECK_FALSE(multipart_field("multipart/form-data", body, "data"));  // no boundary
  CHECK_FALSE(
      multipart_field(ct, "--XyZ\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\nunterminated", "data"));
  CHECK_FALSE(multipart_field(ct, "garbage", "data"));
  CHECK_FALSE(multipart_field(ct, "--XyZ\r\n\r\nno headers\r\n--XyZ--", "data"));
}
