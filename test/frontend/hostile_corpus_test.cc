// The hostile-request corpus replayed in the test suite, so that the
// sanitizer job (ASan + UBSan: test/sanitizers/run_sanitizers) runs it on
// every CI run, not only the fuzzers: every seed of fuzz_v2_request
// (test/fuzz/corpus/v2_request: the protocol's shapes, the inputs that once
// crashed lull serve or overflowed a shape) through the v2 request decoding,
// then every seed of fuzz_http_request and every v2 body raw on a fresh
// connection to a front end, which must answer or close each and still
// answer /ping. Also lull's class header: two of them are refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/frontend/frontend.h"
#include "runtime/frontend/v2_front_codec.h"
#include "runtime/net/json_value.h"
#include "test/frontend/raw_http_client.h"

using namespace lull::frontend;
using namespace lull::serve::testing;

namespace {

std::vector<std::string> corpus(const std::string& target) {
  std::vector<std::string> out;
  const std::filesystem::path dir = std::filesystem::path(LULL_SOURCE_DIR) / "test/fuzz/corpus" / target;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

class CountingService final : public QueryService {
 public:
  Answer serve(std::string input) override {
    Answer a;
    a.body = input.empty() ? "empty input reached the service" : "{\"ok\":1}";
    a.http_status = input.empty() ? 500 : 200;
    a.model = "m";
    return a;
  }
  std::string metrics_text() override { return ""; }
  bool healthy() override { return true; }
};

}  // namespace

TEST_CASE("hostile corpus: every v2 seed is accepted with queries or refused in one line", "[frontend][v2][corpus]") {
  const auto bodies = corpus("v2_request");
  REQUIRE(bodies.size() >= 20);
  int accepted = 0;
  for (const std::string& body : bodies) {
    INFO(body.substr(0, 200));
    V2InferRequest r;
    std::string error;
    if (parse_v2_infer_request(body, &r, &error)) {
      ++accepted;
      REQUIRE_FALSE(r.queries.empty());
      for (const std::string& q : r.queries) {
        CHECK_FALSE(q.empty());
        lull::net::JsonValue v;
        if (q.rfind("{\"inputs\":[", 0) == 0) CHECK(lull::net::parse_json(q, &v));
      }
    } else {
      CHECK_FALSE(error.empty());
      CHECK(error.find('\n') == std::string::npos);
    }
  }
  CHECK(accepted > 0);
}

TEST_CASE("hostile corpus: every raw request seed and v2 body is answered or closed, and /ping still answers",
          "[frontend][corpus][process]") {
  CountingService service;
  FrontendOptions o;
  o.port = 0;
  o.task = "t";
  // Short timeouts: a seed that is a partial request is closed soon (the verdict is the close, not its time).
  o.header_timeout_ms = 200;
  o.body_timeout_ms = 200;
  Frontend fe(service, o);
  fe.start();
  std::vector<std::string> requests = corpus("http_request");
  for (const std::string& body : corpus("v2_request"))
    requests.push_back(
        "POST /v2/models/t/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Connection: close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body);
  int answered = 0;
  for (const std::string& request : requests) {
    RawConnection c(fe.port());
    REQUIRE(c.connected());
    c.send(request);
    const std::string response = c.read_response(10000);  // bounded; a close ends it early
    if (status_of(response) != 0) ++answered;
    CHECK(status_of(response) != 500);  // no empty input reached the service
  }
  CHECK(answered > 0);
  RawConnection ping(fe.port());
  REQUIRE(ping.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(status_of(ping.read_response()) == 200);
}

TEST_CASE("two X-Lull-Class headers are refused, not resolved to the first", "[frontend][process]") {
  CountingService service;
  FrontendOptions o;
  o.port = 0;
  o.task = "t";
  Frontend fe(service, o);
  fe.start();
  RawConnection c(fe.port());
  REQUIRE(
      c.send("POST /predictions/t HTTP/1.1\r\nHost: x\r\nX-Lull-Class: gold\r\nX-Lull-Class: bronze\r\n"
             "Content-Length: 1\r\n\r\nx"));
  const std::string response = c.read_response();
  CHECK(status_of(response) == 400);
  CHECK(response.find("more than one X-Lull-Class header") != std::string::npos);
  RawConnection one(fe.port());
  REQUIRE(one.send("POST /predictions/t HTTP/1.1\r\nHost: x\r\nX-Lull-Class: gold\r\nContent-Length: 1\r\n\r\nx"));
  CHECK(status_of(one.read_response()) == 200);
}
