// TorchServe token authorization: lull reads key_file.json, sends the right
// key to each API, and names a refused token as such. The stand-in server
// with --token-file enforces the keys the way TorchServe does.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "test/support/backend_test_support.h"
#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/upstream/torchserve/torchserve_token.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::serve::testing;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/lull-token-test-" + std::to_string(getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

const char* kKeyFile = R"({
  "management": {"key": "mgmt-KEY1", "expiration time": "2030-01-01T00:00:00.000000Z"},
  "inference": {"key": "infer-KEY2", "expiration time": "2030-01-01T00:00:00.000000Z"},
  "API": {"key": "api-KEY3"}
})";

}  // namespace

TEST_CASE("key file: both keys read, a missing one named", "[serve][token]") {
  const auto keys = read_torchserve_key_file(write_temp("good.json", kKeyFile));
  CHECK(keys.inference == "infer-KEY2");
  CHECK(keys.management == "mgmt-KEY1");
  const auto bad = write_temp("bad.json", R"({"management": {"key": "m"}, "inference": {"key": 3}})");
  try {
    read_torchserve_key_file(bad);
    FAIL("expected invalid_argument");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == bad + ": inference.key: missing or not a non-empty string");
  }
  CHECK_THROWS_AS(read_torchserve_key_file(write_temp("notjson.json", "Management Key: x")), std::invalid_argument);
  CHECK_THROWS_AS(read_torchserve_key_file("/nonexistent/key_file.json"), std::invalid_argument);
}

TEST_CASE("token: the stand-in enforces it, lull sends it to each API", "[serve][token]") {
  const auto key_path = write_temp("server.json", kKeyFile);
  ModelServerProcess server({"--fake", "fast:1:0", "--token-file", key_path});
  const auto keys = read_torchserve_key_file(key_path);
  HttpClient client;

  HttpRequest ping;
  ping.url = server.url() + "/ping";
  CHECK(client.fetch(ping).ok());  // like TorchServe: health needs no token

  HttpRequest predict;
  predict.method = "POST";
  predict.url = server.url() + "/predictions/fast";
  predict.body = "abc";
  auto refused = client.fetch(predict);
  CHECK(refused.status == 400);
  CHECK(refused.body.find("InvalidKeyException") != std::string::npos);
  CHECK(is_token_refusal(refused));
  predict.bearer_token = keys.management;  // the wrong key for this API
  CHECK(is_token_refusal(client.fetch(predict)));
  predict.bearer_token = keys.inference;
  auto answered = client.fetch(predict);
  CHECK(answered.status == 200);
  CHECK_FALSE(is_token_refusal(answered));

  ModelCheckOptions check;
  check.management_key = keys.management;
  CHECK_NOTHROW(check_models_loaded(client, {{server.url(), server.url()}}, {"fast"}, check));
}

TEST_CASE("token: a refused management token is named, not reported as missing models", "[serve][token]") {
  const auto key_path = write_temp("refused.json", kKeyFile);
  ModelServerProcess server({"--fake", "fast:1:0", "--token-file", key_path});
  HttpClient client;
  for (const std::string key : {"", "wrong-key"}) {
    ModelCheckOptions check;
    check.management_key = key;
    try {
      check_models_loaded(client, {{server.url(), server.url()}}, {"fast"}, check);
      FAIL("expected ModelCheckError");
    } catch (const ModelCheckError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find("model server " + server.url() + " refused the management token (HTTP 400)") == 0);
      CHECK(msg.find(key.empty() ? "no token was sent" : "is wrong or expired") != std::string::npos);
      CHECK(msg.find("lacks") == std::string::npos);
    }
  }
}

TEST_CASE("token: batches carry the inference key, and without it the batch error names the token", "[serve][token]") {
  const auto key_path = write_temp("backend.json", kKeyFile);
  ModelServerProcess server({"--fake", "fast:1:0", "--token-file", key_path});
  lull::serve::testing::QueryInputsForTest inputs;
  inputs.put(1, "aa");
  inputs.put(2, "bbbb");
  for (const bool with_key : {true, false}) {
    TorchServeOptions options;
    if (with_key) options.inference_key = read_torchserve_key_file(key_path).inference;
    TorchServeBackend backend({{server.url(), server.url()}}, {"fast"}, options);
    ResultLog log;
    backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
    REQUIRE(backend.start() == 1);
    backend.start_batch(inputs.batch(0, 0, {1, 2}));
    auto results = log.wait_for(1, std::chrono::milliseconds(5000));
    REQUIRE(results.size() == 1);
    INFO(results[0].error);
    CHECK(results[0].ok == with_key);
    if (with_key) {
      CHECK(results[0].outputs ==
            std::vector<std::string>{"{\"class\":2,\"score\":1.0}", "{\"class\":4,\"score\":1.0}"});
    } else {
      CHECK(results[0].error.find("refused the inference token") != std::string::npos);
      CHECK(backend.worker_up(0));  // a refused token is not a broken worker
    }
    backend.stop();
  }
}

// Mutated key files: each is refused with one line naming the file
// (and the field, where there is one), never read without bound, and no key
// that could break the Authorization header gets through.
TEST_CASE("key file: truncated, huge, wrong types, missing keys and binary files are refused in one line",
          "[serve][token]") {
  const std::string good = kKeyFile;
  auto refused = [](const std::string& path, const std::string& needle) {
    INFO(path << " -> " << needle);
    try {
      read_torchserve_key_file(path);
      FAIL("read a bad key file");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      CHECK(what.rfind(path + ": ", 0) == 0);
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find(needle) != std::string::npos);
    }
  };
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, good.size() / 3, good.size() / 2, good.size() - 2})
    refused(write_temp("cut" + std::to_string(n) + ".json", good.substr(0, n)), "not a JSON object");
  refused(write_temp("array.json", "[1, 2]"), "not a JSON object");
  refused(write_temp("string.json", "\"key\""), "not a JSON object");
  refused(write_temp("null_section.json", R"({"management": null, "inference": {"key": "i"}})"), "management: missing");
  refused(write_temp("list_section.json", R"({"management": ["k"], "inference": {"key": "i"}})"),
          "management: missing");
  refused(write_temp("no_inference.json", R"({"management": {"key": "m"}})"), "inference: missing");
  refused(write_temp("empty_key.json", R"({"management": {"key": ""}, "inference": {"key": "i"}})"), "management.key");
  refused(write_temp("object_key.json", R"({"management": {"key": {"k": 1}}, "inference": {"key": "i"}})"),
          "management.key");
  refused(write_temp("bool_key.json", R"({"management": {"key": "m"}, "inference": {"key": true}})"), "inference.key");
  // Keys that would end or forge the header line.
  refused(write_temp("crlf_key.json", R"({"management": {"key": "m\r\nX-Evil: 1"}, "inference": {"key": "i"}})"),
          "management.key: must be at most 4096 printable ASCII");
  refused(write_temp("space_key.json", R"({"management": {"key": "m"}, "inference": {"key": "a b"}})"),
          "inference.key");
  refused(write_temp("nul_key.json", R"({"management": {"key": "m\u0000x"}, "inference": {"key": "i"}})"),
          "management.key");
  refused(write_temp("long_key.json",
                     R"({"management": {"key": ")" + std::string(5000, 'k') + R"("}, "inference": {"key": "i"}})"),
          "management.key");
  // Huge: padded past 1 MiB with spaces (valid JSON otherwise); an endless
  // device and a FIFO without a writer (whose blocking open hung) are not
  // regular files.
  refused(write_temp("huge.json", good + std::string((1 << 20) + 1, ' ')), "larger than 1048576 bytes");
  refused("/dev/zero", "a character device, not a regular file");
  const std::string fifo = write_temp("key.fifo", "");
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  refused(fifo, "a FIFO (named pipe), not a regular file");
  std::remove(fifo.c_str());
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 131 + 7) % 256);
  refused(write_temp("binary.json", binary), "not a JSON object");
  refused(write_temp("deep.json", std::string(100000, '[') + std::string(100000, ']')), "not a JSON object");
  // Unknown fields and a key of every printable character still read.
  std::string printable;
  for (char c = '!'; c < 0x7f; ++c)
    if (c != '"' && c != '\\') printable += c;
  const auto keys = read_torchserve_key_file(
      write_temp("extra.json", R"({"x": [1, {"y": null}], "management": {"key": ")" + printable +
                                   R"(", "expiration time": 5}, "inference": {"key": "i"}})"));
  CHECK(keys.management == printable);
  CHECK(keys.inference == "i");
}
