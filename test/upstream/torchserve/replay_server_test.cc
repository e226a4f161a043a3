// The stand-in server's --replay-profile mode, which the end-to-end gate
// (serve.e2e_replay) serves through: models and batches as the profile says,
// the batch contract kept, and a batch never answered before its replayed
// latency (a sleep is never shorter; no upper bound is checked, since that
// would be a timing verdict).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "test/support/model_server_process.h"
#include "runtime/upstream/torchserve/batch_codec.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/model_check.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::serve::testing;

namespace {

// POSTs a contract batch of `n` inputs to `model`; returns the response.
HttpResponse post_batch(HttpClient& client, const ModelServerProcess& server, const std::string& model, int n) {
  std::vector<std::string> inputs;
  for (int i = 0; i < n; ++i) inputs.push_back(std::string(static_cast<size_t>(i + 1), 'x'));
  std::vector<const std::string*> ptrs;
  for (const auto& s : inputs) ptrs.push_back(&s);
  HttpRequest req;
  req.method = "POST";
  req.url = server.url() + "/predictions/" + model;
  req.content_type = "application/json";
  req.body = encode_batch_request(ptrs);
  return client.fetch(req);
}

}  // namespace

TEST_CASE("replay server: the profile's models, its latencies as lower bounds", "[serve][replay]") {
  // tiny_profile.json: slow has batches 1, 2, 4, 8 at 12, 16, 24, 40 ms.
  ModelServerProcess server({"--replay-profile", source_path("test/data/tiny_profile.json"), "--seed", "3"});
  HttpClient client;
  CHECK_NOTHROW(check_models_loaded(client, {{server.url(), server.url()}}, {"fast", "slow"}));

  struct Case {
    int batch;
    double min_ms;
  };
  // 3: between batches 2 and 4 (20 ms); 16: past 8, on the line through 4 and 8 (72 ms).
  for (const Case c : {Case{1, 12}, Case{4, 24}, Case{3, 20}, Case{16, 72}}) {
    const HttpResponse r = post_batch(client, server, "slow", c.batch);
    INFO("batch " << c.batch << ": " << r.describe());
    REQUIRE(r.ok());
    const auto preds = decode_batch_response(r.body, static_cast<size_t>(c.batch));
    REQUIRE(preds.size() == static_cast<size_t>(c.batch));
    INFO(preds.back());
    CHECK(preds.back().find("\"class\":" + std::to_string(c.batch) + ",") != std::string::npos);  // len(input)
    CHECK(r.elapsed_us >= static_cast<std::int64_t>(c.min_ms * 1000));
  }
}

TEST_CASE("replay server: --models picks from the profile, an unknown one stops it", "[serve][replay]") {
  ModelServerProcess only_fast({"--replay-profile", source_path("test/data/tiny_profile.json"), "--models", "fast"});
  HttpClient client;
  CHECK_NOTHROW(check_models_loaded(client, {{only_fast.url(), only_fast.url()}}, {"fast"}));
  CHECK_THROWS_AS(check_models_loaded(client, {{only_fast.url(), only_fast.url()}}, {"slow"}), ModelCheckError);
  CHECK_THROWS_AS(
      ModelServerProcess({"--replay-profile", source_path("test/data/tiny_profile.json"), "--models", "fast,nope"}),
      std::runtime_error);
  CHECK_THROWS_AS(ModelServerProcess({"--replay-profile", source_path("test/data/no_such_profile.json")}),
                  std::runtime_error);
}
