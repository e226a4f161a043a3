#include <catch2/catch.hpp>

#include "model_server_process.h"
#include "runtime/serve/model_check.h"

using namespace lull::serve;
using namespace lull::serve::testing;

TEST_CASE("model check passes when every worker has every model", "[serve][management]") {
  ModelServerProcess s0({"--fake", "a:0:0", "--fake", "b:0:0"}), s1({"--fake", "a:0:0", "--fake", "b:0:0"});
  HttpClient client;
  CHECK_NOTHROW(check_models_loaded(client, {{s0.url(), s0.url()}, {s1.url(), s1.url()}}, {"a", "b"}));
}

TEST_CASE("model check names the worker, the missing models and what it has", "[serve][management]") {
  ModelServerProcess s0({"--fake", "a:0:0", "--fake", "b:0:0"}), s1({"--fake", "a:0:0"});
  HttpClient client;
  const std::string dead = "http://127.0.0.1:" + std::to_string(free_port());
  try {
    check_models_loaded(client, {{s0.url(), s0.url()}, {s1.url(), s1.url()}, {dead, dead}}, {"a", "b", "c"});
    FAIL("expected ModelCheckError");
  } catch (const ModelCheckError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("worker " + s0.url() + " lacks model c (loaded: a, b)") != std::string::npos);
    CHECK(msg.find("worker " + s1.url() + " lacks models b, c (loaded: a)") != std::string::npos);
    CHECK(msg.find(dead + " unreachable") != std::string::npos);
  }
}
