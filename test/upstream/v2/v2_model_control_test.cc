// The v2 protocol's calls over the in-memory transport: model loading through
// the repository extension, the start-up model check, the wire's requests and
// its health verdict (runtime/upstream/v2/).
#include <catch2/catch.hpp>

#include <map>

#include <stdexcept>

#include "runtime/upstream/v2/v2_model_check.h"
#include "runtime/upstream/v2/v2_model_control.h"
#include "runtime/upstream/v2/v2_wire.h"
#include "test/support/fake_http_transport.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::v2;
using lull::test::FakeHttpTransport;

namespace {
const std::string kUrl = "http://10.0.0.1:8000";
}  // namespace

TEST_CASE("v2 model control: load and unload are POSTs to the repository extension", "[v2]") {
  FakeHttpTransport http;
  int loads = 0;
  http.route("POST", kUrl + "/v2/repository/models/resnet/load", [&](const HttpRequest&) {
    ++loads;
    return FakeHttpTransport::reply(200);
  });
  http.route("POST", kUrl + "/v2/repository/models/resnet/unload",
             [](const HttpRequest&) { return FakeHttpTransport::reply(200); });
  http.route("POST", kUrl + "/v2/repository/models/broken/load", [](const HttpRequest&) {
    return FakeHttpTransport::reply(400, R"({"error":"failed to load 'broken': no version is available"})");
  });
  V2ModelControl control(http, 5000);
  control.load(kUrl, "resnet");
  control.unload(kUrl, "resnet");
  CHECK(loads == 1);
  const auto sent = http.requests();
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].method == "POST");
  CHECK(sent[0].timeout_ms == 5000);
  CHECK(sent[1].url == kUrl + "/v2/repository/models/resnet/unload");
  // A refused load throws with the server's own message.
  try {
    control.load(kUrl, "broken");
    FAIL("a refused load must throw");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("HTTP 400: failed to load 'broken': no version is available") !=
          std::string::npos);
  }
  CHECK_THROWS_WITH(control.unload("http://10.0.0.9:1", "resnet"), Catch::Contains("Connection refused"));
}

TEST_CASE("v2 model check: ready models with the input pass, the rest are named at once", "[v2]") {
  FakeHttpTransport http;
  const std::string a = "http://10.0.0.1:8000", b = "http://10.0.0.2:8000";
  const std::string meta =
      R"({"name":"m","versions":["1"],"platform":"x","inputs":[{"name":"input","datatype":"BYTES","shape":[-1]}],"outputs":[]})";
  for (const auto& url : {a, b}) {
    http.route("GET", url + "/v2/models/fast/ready",
               [](const HttpRequest&) { return FakeHttpTransport::reply(200, R"({"name":"fast","ready":true})"); });
    http.route("GET", url + "/v2/models/fast", [&](const HttpRequest&) { return FakeHttpTransport::reply(200, meta); });
  }
  check_v2_models_ready(http, {{a, a}, {b, b}}, {"fast"});  // passes

  // On b: "slow" is loading (ready false), "other" is unknown, "text" takes another input.
  http.route("GET", b + "/v2/models/slow/ready",
             [](const HttpRequest&) { return FakeHttpTransport::reply(200, R"({"name":"slow","ready":false})"); });
  http.route("GET", b + "/v2/models/other/ready",
             [](const HttpRequest&) { return FakeHttpTransport::reply(404, R"({"error":"unknown model: 'other'"})"); });
  http.route("GET", b + "/v2/models/text/ready", [](const HttpRequest&) { return FakeHttpTransport::reply(200); });
  http.route("GET", b + "/v2/models/text", [](const HttpRequest&) {
    return FakeHttpTransport::reply(200,
                                    R"({"name":"text","inputs":[{"name":"TEXT","datatype":"BYTES","shape":[-1]}]})");
  });
  V2ModelCheckOptions named_input;
  named_input.input_name = "input";  // --v2-input-name input: every model must list it
  try {
    check_v2_models_ready(http, {{a, a}, {b, b}}, {"fast", "slow", "other", "text"}, named_input);
    FAIL("the check must fail");
  } catch (const ModelCheckError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("server " + a + ": slow cannot be asked (Connection refused)") != std::string::npos);
    CHECK(what.find("slow not ready (HTTP 200)") != std::string::npos);
    CHECK(what.find("other not ready (HTTP 404: unknown model: 'other')") != std::string::npos);
    CHECK(what.find("text its inputs are [TEXT], none named 'input' (--v2-input-name)") != std::string::npos);
    CHECK(what.find("fast") == std::string::npos);  // ready everywhere: not named
  }
  V2ModelCheckOptions text;
  text.input_name = "TEXT";
  check_v2_models_ready(http, {{b, b}}, {"text"}, text);  // passes with its input's name
  // Without the flag, a model's one declared input is what it is sent.
  std::map<std::string, std::string> declared;
  V2ModelCheckOptions learn;
  learn.declared = &declared;
  check_v2_models_ready(http, {{b, b}}, {"text"}, learn);
  CHECK(declared == std::map<std::string, std::string>{{"text", "TEXT"}});
  // Servers that disagree on a model's one input (TEXT on b, input on a) are named, not guessed between.
  http.route("GET", a + "/v2/models/text/ready", [](const HttpRequest&) { return FakeHttpTransport::reply(200); });
  http.route("GET", a + "/v2/models/text", [](const HttpRequest&) {
    return FakeHttpTransport::reply(200, R"({"name":"text","inputs":[{"name":"input","datatype":"BYTES"}]})");
  });
  declared.clear();
  CHECK_THROWS_WITH(check_v2_models_ready(http, {{a, a}, {b, b}}, {"text"}, learn),
                    Catch::Contains("text declares its input 'TEXT' here and 'input' on another server"));
  declared.clear();
  check_v2_models_ready(http, {{b, b}}, {"text"}, learn);
  V2Wire wire;
  wire.learn_input_names(declared);
  const std::string in = "abc";
  CHECK(wire.batch_request(b, "text", {&in}).body.find(R"("name":"TEXT")") != std::string::npos);
  CHECK(wire.batch_request(b, "fast", {&in}).body.find(R"("name":"input")") != std::string::npos);
  const std::string row = R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1,2]}]})";
  CHECK(wire.batch_request(b, "text", {&row}).body.find(R"("name":"TEXT")") != std::string::npos);  // renamed
  CHECK(wire.batch_request(b, "fast", {&row}).body.find(R"("name":"x")") != std::string::npos);     // as sent
  // A model declaring several inputs, none "input", needs the flag.
  http.route("GET", b + "/v2/models/pair/ready", [](const HttpRequest&) { return FakeHttpTransport::reply(200); });
  http.route("GET", b + "/v2/models/pair", [](const HttpRequest&) {
    return FakeHttpTransport::reply(200, R"({"name":"pair","inputs":[{"name":"A"},{"name":"B"}]})");
  });
  CHECK_THROWS_WITH(check_v2_models_ready(http, {{b, b}}, {"pair"}, learn),
                    Catch::Contains("pair its inputs are [A, B], none named 'input' (--v2-input-name)"));
  CHECK_THROWS_AS(check_v2_models_ready(http, {{a, a}}, {"a/b"}), ModelCheckError);
}

TEST_CASE("v2 wire: infer and ready requests, healthy while the model is ready", "[v2]") {
  const V2Wire wire("image");
  const std::string in = "abc";
  const HttpRequest batch = wire.batch_request(kUrl, "resnet", {&in});
  CHECK(batch.method == "POST");
  CHECK(batch.url == kUrl + "/v2/models/resnet/infer");
  CHECK(batch.content_type == "application/json");
  CHECK(batch.body.find("\"name\":\"image\"") != std::string::npos);
  const HttpRequest ready = wire.health_request(kUrl, "resnet");
  CHECK(ready.method == "GET");
  CHECK(ready.url == kUrl + "/v2/models/resnet/ready");
  auto response = [](int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
  };
  CHECK(wire.healthy(response(200, R"({"name":"resnet","ready":true})")));
  CHECK(wire.healthy(response(200, "")));  // Triton answers 200 with no body
  CHECK_FALSE(wire.healthy(response(200, R"({"name":"resnet","ready":false})")));
  CHECK_FALSE(wire.healthy(response(400, R"({"error":"not ready"})")));
  CHECK_FALSE(wire.healthy(HttpResponse{}));  // no answer
}

TEST_CASE("v2 wire: tensor queries go stacked, apart from bytes and from other layouts", "[v2]") {
  const V2Wire wire;
  const std::string a1 = R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1,2],"data":[1,2]}]})";
  const std::string a2 = R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1,2],"data":[3,4]}]})";
  const std::string b = R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1,2]}]})";
  const std::string raw = "hello";
  CHECK(wire.same_request(a1, a2));
  CHECK(wire.same_request(raw, "other bytes"));
  CHECK_FALSE(wire.same_request(a1, b));
  CHECK_FALSE(wire.same_request(a1, raw));
  const HttpRequest stacked = wire.batch_request(kUrl, "m", {&a1, &a2});
  CHECK(stacked.body == R"({"inputs":[{"name":"x","shape":[2,2],"datatype":"INT32","data":[1,2,3,4]}]})");
  // Mixed (a caller that did not keep to same_request): all as bytes.
  const HttpRequest mixed = wire.batch_request(kUrl, "m", {&a1, &raw});
  CHECK(mixed.body.find(R"("name":"input","shape":[2],"datatype":"BYTES")") != std::string::npos);
}
