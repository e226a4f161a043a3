#pragma once
// The Open Inference Protocol's (KServe v2) JSON on lull's front end
// (docs/operators-guide.md): a v2 inference request becomes ONE lull query, and
// its answer goes back as a v2 inference response naming the model that
// served it. What the query's input bytes are:
//  - one input of datatype BYTES holding one element: that element (base64-
//    decoded when the input's parameters say "content_type": "base64",
//    MLServer's convention for bytes that are not text). The same bytes a
//    TorchServe-route client would send, so both routes reach the same models;
//  - any other inputs (tensors, several inputs): the request's inputs as
//    compact JSON, {"inputs": [...]}, each with name, datatype, shape, data
//    (and parameters when given), for a model that reads v2 tensors.
// The answer's outputs: a prediction that is already v2 outputs
// ({"outputs": [...]}, what a v2 backend hands back for tensors) goes back
// as they are; any other prediction (JSON text) is one BYTES output
// "output" of shape [1] whose element is that text.
// Requests are checked as the protocol describes them before any query
// is made: a body that is not a JSON object, missing or empty "inputs", an
// input without a name, with an unknown datatype, a shape that is not a
// list of counts, data whose element count is not the shape's or whose
// elements are not of the datatype: 400 {"error": "..."} naming it.
#include <string>

namespace lull::frontend {

struct V2InferRequest {
  std::string id;  // the request's "id" (echoed back when has_id)
  bool has_id = false;
  std::string input;  // the query's input bytes (above)
};

// Parses and checks an inference request body; false with *error (one line,
// naming the field) when it is not a valid one.
bool parse_v2_infer_request(const std::string& body, V2InferRequest* out, std::string* error);

// The 200 answer: {"model_name": MODEL, "id": ..., "parameters": {"lull_task": TASK}, "outputs": [...]}.
std::string v2_infer_response(const std::string& model, const std::string& task, const V2InferRequest& request,
                              const std::string& prediction);

// The protocol's error body {"error": MESSAGE}.
std::string v2_error_body(const std::string& message);

// The message of an error body in TorchServe's shape {"code","type","message"}
// (what a model answers for an input it rejected); `body` itself otherwise.
std::string torchserve_error_message(const std::string& body);

}  // namespace lull::frontend
