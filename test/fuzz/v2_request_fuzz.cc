// libFuzzer target: the v2 front end's inference request decoding
// (runtime/frontend/v2_front_codec), the first thing lull does with an
// unauthenticated client's body on POST /v2/models/{task}/infer. Besides
// crashes and sanitizer reports it checks the codec's promises: a request is
// accepted with a non-empty input or refused with a one-line error; an
// accepted tensor request is passed on as JSON; the answer built for any
// prediction is JSON.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/net/json_value.h"
#include "runtime/frontend/v2_front_codec.h"
#include "runtime/upstream/v2/v2_codec.h"
#include "test/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace lull::frontend;
  using namespace lull::net;
  using namespace lull::v2;
  using lull::fuzz::finding;
  const std::string body(reinterpret_cast<const char*>(data), size);
  V2InferRequest request;
  std::string error;
  const bool accepted = parse_v2_infer_request(body, &request, &error);
  if (accepted && request.queries.empty()) finding("accepted without a query");
  if (!accepted && (error.empty() || error.find('\n') != std::string::npos))
    finding("refused without a one-line reason");
  if (!accepted) return 0;
  JsonValue parsed;
  for (const std::string& q : request.queries) {
    if (q.empty()) finding("accepted an empty query");
    if (q.rfind("{\"inputs\":[", 0) == 0 && !parse_json(q, &parsed)) finding("a tensor row passed on is not JSON");
  }
  if (is_utf8(request.queries[0]) && is_utf8(request.id) &&
      !parse_json(v2_infer_response("m", "t", request, request.queries[0]), &parsed))
    finding("the answer is not JSON");
  if (is_utf8(request.id)) {
    std::vector<std::string> models(request.queries.size(), "m"), predictions;
    for (const std::string& q : request.queries) predictions.push_back(is_utf8(q) ? q : "x");
    std::string body, why;
    if (v2_infer_batch_response(models, "t", request, predictions, &body, &why) && !parse_json(body, &parsed))
      finding("the batch answer is not JSON");
  }
  return 0;
}
