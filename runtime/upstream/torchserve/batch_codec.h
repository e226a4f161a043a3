#pragma once
// lull's batch contract on the wire (docs/operators-guide.md, and the Python side in
// packaging/torchserve/lull_batch_contract.py):
//   request  {"inputs": ["<base64>", ...]}       one POST /predictions/{model}
//   response {"predictions": [<json>, ...]}      same length, same order
// A prediction may instead be a per-input error, when the model rejected that
// one input (undecodable bytes) but served the rest of the batch:
//   {"error": {"code": 400, "type": "InvalidInput", "message": "..."}}
#include <stdexcept>
#include <string>
#include <vector>

namespace lull::torchserve {

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

// When `prediction` (one element of decode_batch_response) is a per-input
// error, returns its HTTP status (its "code" when 400..599, else 400) and sets
// *error_json to the error object in TorchServe's shape {"code","type","message"};
// returns 0 for an ordinary prediction.
int input_error_status(const std::string& prediction, std::string* error_json);

// Over decode_batch_response's result: replaces each per-input error by its
// error JSON and returns every element's status (0: a prediction); returns
// an empty vector when no element is an error.
std::vector<int> take_input_errors(std::vector<std::string>& predictions);

}  // namespace lull::torchserve
