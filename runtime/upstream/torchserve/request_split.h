#pragma once
// Keeps each request lull sends under the model server's request-size limit
// (TorchServe's max_request_size, 6553500 bytes by default): a batch whose
// encoded body would exceed it goes as several consecutive requests to the
// same worker, their predictions joined in order. A batch of sixteen 1 MB
// images is ~21 MB once base64-encoded; TorchServe would refuse it whole.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lull::torchserve {

inline constexpr std::int64_t kTorchServeMaxRequestBytes = 6553500;  // TorchServe's default max_request_size

// One input alone encodes past the limit; no split can send it.
struct RequestTooLargeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RequestPart {
  size_t begin = 0, end = 0;  // inputs [begin, end) of the batch
};

// Bytes of encode_batch_request's body for inputs of these raw sizes
// (batch_codec.h: {"inputs":["<base64>",...]}).
std::int64_t encoded_batch_request_size(const std::vector<size_t>& input_sizes);

// Consecutive parts covering every input in order, each part's body at most
// `max_bytes`, as few as greedy filling gives. Throws RequestTooLargeError
// naming the query (1-based position in the batch), its encoded size and the
// limit when one input alone is over it. No inputs: one empty part.
std::vector<RequestPart> split_batch_request(const std::vector<size_t>& input_sizes, std::int64_t max_bytes);

}  // namespace lull::torchserve
