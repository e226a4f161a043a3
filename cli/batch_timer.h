#pragma once
// One batch's end-to-end latency through a model server, as `lull profile`
// and `lull check` measure it: a request of `batch` inputs (taken in turn from
// a pool, round and round), sent alone, its answer decoded by the wire's
// batch contract. Throws std::runtime_error for a refused or failed request.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/batch_wire.h"

namespace lull::cli {

// The query inputs: the files of `dir` (name order; not hidden files or
// .md), or, with `dir` empty, one block of `random_bytes` seeded bytes
// (which only the stand-in's fake and replay models accept).
std::vector<std::string> batch_inputs(const std::string& dir, int random_bytes);

class BatchTimer {
 public:
  BatchTimer(std::string base_url, const torchserve::BatchWire& wire, std::vector<std::string> inputs,
             std::int64_t timeout_ms, std::string bearer_token);
  // Seconds from sending the request to its decoded answer.
  double seconds(const std::string& model, int batch);

 private:
  std::string url_;
  const torchserve::BatchWire& wire_;
  std::vector<std::string> inputs_;
  std::size_t next_ = 0;
  std::int64_t timeout_ms_;
  std::string token_;
  net::HttpClient client_;
};

}  // namespace lull::cli
