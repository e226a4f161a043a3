#include <catch2/catch.hpp>

#include "runtime/upstream/torchserve/worker_endpoint.h"

using namespace lull::torchserve;

TEST_CASE("worker URLs are checked and paired with management URLs", "[serve][endpoint]") {
  auto w = parse_worker_endpoints("http://127.0.0.1:8080/, http://127.0.0.1:8090", "");
  REQUIRE(w.size() == 2);
  CHECK(w[0].inference_url == "http://127.0.0.1:8080");
  CHECK(w[0].management_url == "http://127.0.0.1:8080");
  auto m = parse_worker_endpoints("http://h:8080", "http://h:8081");
  CHECK(m[0].management_url == "http://h:8081");
  CHECK_THROWS_WITH(parse_worker_endpoints("https://h:1", ""), Catch::Contains("https://h:1"));
  CHECK_THROWS_WITH(parse_worker_endpoints("http://h", ""), Catch::Contains("http://h"));
  CHECK_THROWS_WITH(parse_worker_endpoints("http://h:99999", ""), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(parse_worker_endpoints("http://h:1,http://h:2", "http://h:3"),
                    Catch::Contains("1 management URLs for 2"));
  CHECK_THROWS(parse_worker_endpoints("", ""));
}
