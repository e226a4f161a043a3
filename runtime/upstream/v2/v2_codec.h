#pragma once
// The Open Inference Protocol's (KServe v2) JSON as lull's v2 backend speaks
// it (docs/operators-guide.md, "Open Inference Protocol"). A batch of B queries is
// ONE inference request whose one input is a BYTES tensor of shape [B], an
// element per query:
//   {"inputs": [{"name": NAME, "shape": [B], "datatype": "BYTES", "data": ["...", ...]}]}
// Inputs that are UTF-8 text go as JSON strings; otherwise every element is
// base64 and the input carries "parameters": {"content_type": "base64"}
// (MLServer's convention; JSON strings cannot hold arbitrary bytes).
// Tensor queries are passed through instead: a query whose input is a v2
// tensor set, {"inputs": [{"name","datatype","shape","data"[,"parameters"]},
// ...]} (how lull's v2 front end stores a request with tensor inputs), each
// input of shape [1, ...] (one row), joins the queries of the same layout
// (names, datatypes, shapes, parameters, in order) in ONE request whose
// inputs are theirs stacked along the first dimension, [B, ...]. Queries of
// different layouts cannot share a request (V2Wire sends them apart).
// The answer's outputs are batched along their first dimension (shape[0] ==
// B); query i gets row i of each. Its prediction, one JSON text:
//  - one BYTES output with one element per query: that element, as the JSON
//    it holds (verbatim), else as a JSON string. A per-input error is such an
//    element holding {"error": {"code","type","message"}} (batch_codec.h),
//    which is how lull's handlers and the stand-in server reject one input;
//  - otherwise the query's rows in the protocol's own form,
//    {"outputs": [{"name","datatype","shape": [rows, ...],"data": [...]}, ...]},
//    each output's own "parameters" kept (less a content_type lull decoded).
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/net/json_value.h"  // is_utf8 (net::)

namespace lull::v2 {

inline constexpr const char* kV2ContentType = "application/json";

// The request body for these inputs (raw bytes each), in order.
std::string encode_v2_bytes_request(const std::vector<const std::string*>& inputs, const std::string& input_name);

// The same batch under the binary tensor extension (Triton's; servers list
// "binary_tensor_data" among their extensions): the JSON header without
// "data", "parameters": {"binary_data_size": N}, then each input as its
// 4-byte little-endian length and its raw bytes, so bytes travel raw (no
// base64, no content_type convention a server may not know). The request
// carries Inference-Header-Content-Length: the header's length, set in *header_length.
std::string encode_v2_bytes_binary_request(const std::vector<const std::string*>& inputs, const std::string& input_name,
                                           size_t* header_length);

// A tensor query (above): its layout, the same for queries that can share a
// request, and each input's elements as JSON texts, row-major.
struct V2TensorQuery {
  std::string layout;                                             // "" when the input is not a tensor query
  std::vector<std::string> names, datatypes, shapes, parameters;  // per input; shape/parameters as JSON text
  std::vector<std::vector<std::string>> data;                     // per input, its elements
};
// The query's tensor set; layout "" when `input` is not one (bytes, or
// tensors whose first dimension is not 1: those go as bytes).
V2TensorQuery read_v2_tensor_query(const std::string& input);
// The request for tensor queries of one layout (non-empty, same layout).
std::string encode_v2_tensor_request(const std::vector<V2TensorQuery>& queries);

// An upper bound of the bytes encode_v2_bytes_request adds beyond each
// input's base64 string and its comma (for request_split.h).
std::int64_t v2_envelope_bytes(const std::string& input_name);

// One JSON text per query from an inference response body, in order.
// Throws BatchCodecError naming what is wrong: not JSON, no "outputs", an
// output whose shape[0] is not `expected` or whose data does not fill its shape.
std::vector<std::string> decode_v2_infer_response(const std::string& body, size_t expected);

// The message of an error answer {"error": "..."}, or "" when `body` is not one.
std::string v2_error_message(const std::string& body);

}  // namespace lull::v2
