// Splitting a batch's request under the server's size limit (why: see request_split.h).
#include "runtime/upstream/torchserve/request_split.h"

namespace lull::torchserve {

namespace {

constexpr std::int64_t kEnvelope = 13;  // {"inputs":[ and ]}

std::int64_t encoded_input(size_t raw) { return 4 * static_cast<std::int64_t>((raw + 2) / 3) + 2; }  // "<base64>"

}  // namespace

std::int64_t encoded_batch_request_size(const std::vector<size_t>& input_sizes) {
  std::int64_t total = kEnvelope;
  for (size_t i = 0; i < input_sizes.size(); ++i) total += encoded_input(input_sizes[i]) + (i ? 1 : 0);
  return total;
}

std::vector<RequestPart> split_batch_request(const std::vector<size_t>& input_sizes, std::int64_t max_bytes) {
  if (input_sizes.empty()) return {RequestPart{}};  // an empty batch is still one request
  std::vector<RequestPart> parts;
  std::int64_t part_bytes = 0;
  for (size_t i = 0; i < input_sizes.size(); ++i) {
    const std::int64_t alone = kEnvelope + encoded_input(input_sizes[i]);
    if (alone > max_bytes)
      throw RequestTooLargeError("query " + std::to_string(i + 1) + " of the batch encodes to " +
                                 std::to_string(alone) + " bytes, over the request limit of " +
                                 std::to_string(max_bytes) + " (--max-request-bytes; HTTP 413 on the server)");
    if (parts.empty() || part_bytes + 1 + encoded_input(input_sizes[i]) > max_bytes) {
      parts.push_back({i, i + 1});
      part_bytes = alone;
    } else {
      parts.back().end = i + 1;
      part_bytes += 1 + encoded_input(input_sizes[i]);
    }
  }
  return parts;
}

}  // namespace lull::torchserve
