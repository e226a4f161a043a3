#pragma once
// lull's batch contract on the wire (docs/serving.md, and the Python side in
// runtime/torchserve/lull_batch_contract.py):
//   request  {"inputs": ["<base64>", ...]}       one POST /predictions/{model}
//   response {"predictions": [<json>, ...]}      same length, same order
#include <stdexcept>
#include <string>
#include <vector>

namespace lull::serve {

inline constexpr const char* kBatchContentType = "application/json";

struct BatchCodecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The request body for these inputs (raw bytes each), in order.
std::string encode_batch_request(const std::vector<const std::string*>& inputs);

// Splits a response body into one compact JSON text per input, in order.
// Throws BatchCodecError when it is not JSON, lacks "predictions", or holds
// a different number of predictions than `expected`.
std::vector<std::string> decode_batch_response(const std::string& body, size_t expected);

}  // namespace lull::serve
