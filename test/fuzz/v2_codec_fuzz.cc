// libFuzzer target: the Open Inference Protocol codec (runtime/upstream/v2/v2_codec):
// a v2 server's answer may be anything, and a query's bytes may be anything
// (a client's tensor set or not). Decoding either refuses the body with
// BatchCodecError or returns exactly `expected` predictions; reading a query
// never throws, and the tensor requests of one layout parse as JSON. The
// first byte is the batch size expected; the rest is the body.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/batch_codec.h"
#include "runtime/upstream/v2/v2_codec.h"
#include "test/fuzz/fuzz_support.h"

namespace {

using lull::fuzz::finding;

void check_decode(const std::string& body, size_t expected) {
  using namespace lull::net;
  using namespace lull::torchserve;
  using namespace lull::v2;
  try {
    if (decode_v2_infer_response(body, expected).size() != expected)
      finding("decode returned a different number of predictions");
  } catch (const BatchCodecError&) {
  }
}

void check_query(const std::string& bytes) {
  using namespace lull::net;
  using namespace lull::v2;
  const V2TensorQuery q = read_v2_tensor_query(bytes);
  JsonValue parsed;
  if (!q.layout.empty() && !parse_json(encode_v2_tensor_request({q, q}), &parsed))
    finding("a tensor request is not JSON");
  const std::vector<const std::string*> inputs{&bytes, &bytes};
  if (!parse_json(encode_v2_bytes_request(inputs, bytes.substr(0, 8)), &parsed) && is_utf8(bytes.substr(0, 8)))
    finding("a bytes request is not JSON");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  check_decode(body, data[0] % 9);
  check_query(body);
  return 0;
}
