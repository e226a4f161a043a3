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
#include <cstdint>
#include <string>
#include <vector>

namespace lull::frontend {

// The most rows (queries) one request may carry.
inline constexpr std::int64_t kMaxV2BatchRows = 4096;

struct V2InferRequest {
  std::string id;  // the request's "id" (echoed back when has_id)
  bool has_id = false;
  std::vector<std::string> queries;  // each query's input bytes (above), in row order; B >= 1
  std::vector<std::string> outputs;  // the requested outputs' names, in order; empty: all
};

// Parses and checks an inference request body; false with *error (one line,
// naming the field) when it is not a valid one. `inference_header_length`:
// the request's Inference-Header-Content-Length ("" when absent): the binary
// tensor extension (Triton's, used by default by Triton's and KServe's
// clients), where the body is that many bytes of JSON followed by the raw
// tensors of the inputs whose parameters give "binary_data_size", in input
// order: BYTES as elements each prefixed by its 4-byte little-endian length,
// other datatypes little-endian, as many elements as the shape holds.
bool parse_v2_infer_request(const std::string& body, V2InferRequest* out, std::string* error,
                            const std::string& inference_header_length = "");

// The 200 answer: {"model_name": MODEL, "id": ..., "parameters": {"lull_task": TASK}, "outputs": [...]}.
std::string v2_infer_response(const std::string& model, const std::string& task, const V2InferRequest& request,
                              const std::string& prediction);

// The 200 answer for a batch of rows (one prediction and model per query, in
// order): outputs stacked along the first dimension. The rows' models may
// differ (lull picks per query): model_name is the first row's, and
// parameters.lull_models names each row's when they differ. False with
// *error when the rows' outputs cannot be stacked (different names,
// datatypes or row shapes).
bool v2_infer_batch_response(const std::vector<std::string>& models, const std::string& task,
                             const V2InferRequest& request, const std::vector<std::string>& predictions,
                             std::string* body, std::string* error);

// The requested outputs (request.outputs) kept from a 200 answer `body`
// (one of the two above), in the order asked, the rest dropped; false with
// *error ("outputs: 'NAME' is not an output of model M; it answers: a, b")
// when the answer lacks one (Triton refuses it 400 the same way; the front
// end only knows a model's outputs once it answered). No request: unchanged.
bool select_v2_outputs(const V2InferRequest& request, std::string* body, std::string* error);

// The protocol's error body {"error": MESSAGE}.
std::string v2_error_body(const std::string& message);

// The message of an error body in TorchServe's shape {"code","type","message"}
// (what a model answers for an input it rejected); `body` itself otherwise.
std::string torchserve_error_message(const std::string& body);

}  // namespace lull::frontend
