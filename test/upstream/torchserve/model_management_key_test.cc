// The management client under TorchServe's key rotation, over the fake
// transport: a variant load refused for a key the key file has since
// replaced is sent once more with the new key; a key the file still holds is
// not retried, and the refusal names the management key.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "runtime/upstream/torchserve/model_management.h"
#include "test/support/fake_http_transport.h"

using namespace lull::net;
using namespace lull::torchserve;
using lull::test::FakeHttpTransport;

namespace {
const std::string kUrl = "http://10.0.0.1:8081";

// TorchServe's answer to a wrong key (HTTP 400, InvalidKeyException).
HttpResponse refused() {
  HttpResponse r;
  r.status = 400;
  r.body = R"({"code": 400, "type": "InvalidKeyException", "message": "Token Authorization failed"})";
  return r;
}

void serve_with_key(FakeHttpTransport& fake, const std::string& valid) {
  fake.route("POST", kUrl + "/models", [valid](const HttpRequest& req) {
    if (req.bearer_token != valid) return refused();
    HttpResponse r;
    r.status = 200;
    r.body = R"({"status": "Model \"b\" Version: 1.0 registered with 1 initial workers"})";
    return r;
  });
}
}  // namespace

TEST_CASE("management client: a refused key that the file has replaced is sent again with the new one",
          "[serve][management][token]") {
  FakeHttpTransport fake;
  serve_with_key(fake, "key-2");
  std::string file_key = "key-1";  // the key file before the rotation
  std::vector<bool> asked;
  ModelManagementOptions o;
  o.key_source = [&](bool refused) {
    asked.push_back(refused);
    if (refused) file_key = "key-2";  // read again: TorchServe rotated it
    return file_key;
  };
  ModelManagementClient m(fake, kUrl, o);
  CHECK(m.load("b", "b.mar").find("registered") != std::string::npos);
  CHECK(asked == std::vector<bool>{false, true});
  const auto sent = fake.requests();
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].bearer_token == "key-1");
  CHECK(sent[1].bearer_token == "key-2");
}

TEST_CASE("management client: a key the file still holds is refused once, not retried", "[serve][management][token]") {
  FakeHttpTransport fake;
  serve_with_key(fake, "key-2");
  ModelManagementOptions o;
  o.key_source = [](bool) { return std::string("key-1"); };
  ModelManagementClient m(fake, kUrl, o);
  try {
    m.load("b", "b.mar");
    FAIL("expected ModelManagementError");
  } catch (const ModelManagementError& e) {
    CHECK(e.status == 400);
    CHECK(std::string(e.what()).find("refused the management token") != std::string::npos);
  }
  CHECK(fake.requests().size() == 1);
}
