// libFuzzer target: the batch codec (runtime/upstream/torchserve/batch_codec), base64 and
// the request splitter it is sized by (runtime/net/base64, request_split):
// everything lull reads from or writes to a model server. A model server's
// response body may be anything: decoding either refuses it with
// BatchCodecError or returns exactly `expected` predictions, each an ordinary
// prediction or a per-input error with a 4xx/5xx status. The first byte is
// the batch size expected; the rest is the body.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/net/base64.h"
#include "runtime/upstream/torchserve/batch_codec.h"
#include "runtime/upstream/torchserve/request_split.h"
#include "test/fuzz/fuzz_support.h"

namespace {

using lull::fuzz::finding;

void check_decode(const std::string& body, size_t expected) {
  using namespace lull::net;
  using namespace lull::torchserve;
  std::vector<std::string> predictions;
  try {
    predictions = decode_batch_response(body, expected);
  } catch (const BatchCodecError&) {
    return;
  }
  if (predictions.size() != expected) finding("decode returned a different number of predictions");
  for (const auto& p : predictions) {
    std::string error_json;
    const int status = input_error_status(p, &error_json);
    if (status != 0 && (status < 400 || status > 599)) finding("per-input error status outside 400..599");
  }
  const auto statuses = take_input_errors(predictions);
  if (!statuses.empty() && statuses.size() != expected) finding("take_input_errors: one status per input broken");
}

// Encoding then splitting: the body is what encoded_batch_request_size says,
// and every part of a split fits the limit.
void check_encode(const std::string& bytes) {
  using namespace lull::net;
  using namespace lull::torchserve;
  if (base64_decode(base64_encode(bytes)) != bytes) finding("base64 round trip changed the bytes");
  (void)base64_decode(bytes);
  std::vector<std::string> inputs;
  for (size_t at = 0; at < bytes.size() && inputs.size() < 16; at += 1 + static_cast<unsigned char>(bytes[at]) % 7)
    inputs.push_back(bytes.substr(at, 1 + static_cast<unsigned char>(bytes[at]) % 7));
  std::vector<const std::string*> ptrs;
  std::vector<size_t> sizes;
  for (const auto& s : inputs) {
    ptrs.push_back(&s);
    sizes.push_back(s.size());
  }
  const std::string body = encode_batch_request(ptrs);
  if (static_cast<std::int64_t>(body.size()) != encoded_batch_request_size(sizes))
    finding("encoded_batch_request_size disagrees with encode_batch_request");
  const std::int64_t limit = bytes.empty() ? 20 : 12 + static_cast<unsigned char>(bytes[0]);
  try {
    const auto parts = split_batch_request(sizes, limit);
    size_t next = 0;
    for (const auto& part : parts) {
      if (part.begin != next || part.end < part.begin) finding("split parts are not consecutive");
      std::vector<size_t> sub(sizes.begin() + part.begin, sizes.begin() + part.end);
      if (encoded_batch_request_size(sub) > limit) finding("a split part is over the limit");
      next = part.end;
    }
    if (next != sizes.size()) finding("split parts do not cover the batch");
  } catch (const RequestTooLargeError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  check_decode(body, data[0] % 9);
  check_encode(body);
  return 0;
}
