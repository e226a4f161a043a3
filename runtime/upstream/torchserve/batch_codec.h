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

// A model server's refusal of a whole request (a 4xx other than those that
// say the server cannot serve: 401, 403, 404, 407, 408, 429). KServe, MLServer
// and Triton refuse a request holding one bad input this way, 400 {"error": ...}.
bool is_model_refusal(int status);

// The message of a refusal body: its "error" string (the Open Inference
// Protocol's form), its "message" (TorchServe's), else the body itself,
// one line and at most 300 bytes.
std::string refusal_message(const std::string& body);

// A per-input error prediction (the shape above) for an input the model
// refused alone with this status and message.
std::string refusal_prediction(int status, const std::string& message);

// Over decode_batch_response's result: replaces each per-input error by its
// error JSON and returns every element's status (0: a prediction); returns
// an empty vector when no element is an error.
std::vector<int> take_input_errors(std::vector<std::string>& predictions);

}  // namespace lull::torchserve
