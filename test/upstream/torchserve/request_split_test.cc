// Batches over the request-size limit go as several requests to the same
// worker, joined in order; one query over the limit is refused by name.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "test/support/backend_test_support.h"
#include "test/support/model_server_process.h"
#include "runtime/upstream/torchserve/batch_codec.h"
#include "runtime/upstream/torchserve/request_split.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"

using namespace lull::torchserve;
using namespace lull::serve::testing;

TEST_CASE("request split: the size formula is the codec's body size", "[serve][split]") {
  std::vector<std::string> raw{"", "a", "ab", "abc", "abcd", std::string(1000, 'x')};
  std::vector<const std::string*> ptrs;
  std::vector<size_t> sizes;
  for (const auto& r : raw) {
    ptrs.push_back(&r);
    sizes.push_back(r.size());
    CHECK(encoded_batch_request_size(sizes) == static_cast<std::int64_t>(encode_batch_request(ptrs).size()));
  }
}

TEST_CASE("request split: parts cover the batch in order, each under the limit", "[serve][split]") {
  const std::vector<size_t> sizes{300, 300, 300, 300, 300, 30, 30, 600};
  const std::int64_t limit = 1000;
  const auto parts = split_batch_request(sizes, limit);
  REQUIRE(parts.size() > 1);
  size_t next = 0;
  for (const auto& p : parts) {
    CHECK(p.begin == next);
    CHECK(p.end > p.begin);
    next = p.end;
    const std::vector<size_t> part(sizes.begin() + p.begin, sizes.begin() + p.end);
    CHECK(encoded_batch_request_size(part) <= limit);
    if (p.end < sizes.size()) {  // greedy: the next input would not have fit
      auto grown = part;
      grown.push_back(sizes[p.end]);
      CHECK(encoded_batch_request_size(grown) > limit);
    }
  }
  CHECK(next == sizes.size());
  CHECK(split_batch_request(sizes, 1 << 20).size() == 1);
  CHECK(split_batch_request({}, limit).size() == 1);  // an empty batch is one request

  try {
    split_batch_request({10, 2000, 10}, limit);
    FAIL("expected RequestTooLargeError");
  } catch (const RequestTooLargeError& e) {
    CHECK(std::string(e.what()).find("query 2 of the batch encodes to 2683 bytes, over the request limit of 1000") ==
          0);
  }
}

TEST_CASE("request split: the backend sends a big batch as several requests and joins the answers",
          "[serve][split][backend][process]") {
  const std::string log_path = "/tmp/lull-split-test-" + std::to_string(getpid()) + ".log";
  std::remove(log_path.c_str());
  const std::int64_t limit = 2000;
  // The stand-in refuses (413) bodies over the limit, like TorchServe past max_request_size.
  ModelServerProcess server(
      {"--fake", "fast:0:0", "--max-request-size", std::to_string(limit), "--log-requests", log_path});
  lull::serve::testing::QueryInputsForTest inputs;
  // The fake predicts len(input) % 1000: each answer names its query.
  for (int id = 1; id <= 9; ++id) inputs.put(id, std::string(static_cast<size_t>(100 * id), 'q'));
  TorchServeOptions options;
  options.max_request_bytes = limit;
  TorchServeBackend backend({{server.url(), server.url()}}, {"fast"}, options);
  ResultLog log;
  backend.set_completion_handler([&](const lull::core::BatchResult& r) { log.add(r); });
  REQUIRE(backend.start() == 1);

  backend.start_batch(inputs.batch(0, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  auto results = log.wait_for(1, std::chrono::milliseconds(5000));
  REQUIRE(results.size() == 1);
  INFO(results[0].error);
  REQUIRE(results[0].ok);
  REQUIRE(results[0].outputs.size() == 9);
  for (int id = 1; id <= 9; ++id)
    CHECK(results[0].outputs[id - 1] == "{\"class\":" + std::to_string(100 * id % 1000) + ",\"score\":1.0}");

  // What the server received: the split's parts, each under the limit, all the inputs' bytes.
  std::vector<size_t> sizes;
  for (int id = 1; id <= 9; ++id) sizes.push_back(static_cast<size_t>(100 * id));
  const auto parts = split_batch_request(sizes, limit);
  REQUIRE(parts.size() >= 3);
  std::ifstream in(log_path);
  std::string path;
  std::int64_t bytes;
  std::vector<std::int64_t> got;
  while (in >> path >> bytes) {
    CHECK(path == "/predictions/fast");
    CHECK(bytes <= limit);
    got.push_back(bytes);
  }
  std::vector<std::int64_t> want;
  for (const auto& p : parts)
    want.push_back(encoded_batch_request_size({sizes.begin() + p.begin, sizes.begin() + p.end}));
  std::sort(got.begin(), got.end());  // the parts travel concurrently: arrival order is free
  std::sort(want.begin(), want.end());
  CHECK(got == want);

  // One query over the limit: that batch fails naming it, the worker stays up.
  inputs.put(10, std::string(5000, 'z'));
  backend.start_batch(inputs.batch(0, 0, {1, 10}));
  results = log.wait_for(2, std::chrono::milliseconds(5000));
  REQUIRE(results.size() == 2);
  CHECK_FALSE(results[1].ok);
  CHECK(results[1].error.find("query 2 of the batch encodes to") != std::string::npos);
  CHECK(backend.worker_up(0));
  backend.stop();
  std::remove(log_path.c_str());
}
