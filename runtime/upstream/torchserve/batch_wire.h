#pragma once
// How the HTTP batch backend (torchserve_backend.h) talks to one kind of
// model server: the request that carries a batch, how its answer splits back
// into one prediction per query, and the health probe. The backend's
// scheduling side (in-flight batches, request splits, health, outlier
// ejection) is the same for every protocol; only this part differs.
// torchserve_wire() is TorchServe's API with lull's batch contract
// (batch_codec.h); runtime/upstream/v2/v2_wire.h is the Open Inference Protocol's.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/net/http_transport.h"

namespace lull::torchserve {

class BatchWire {
 public:
  virtual ~BatchWire() = default;
  // The request that sends `inputs` (raw bytes each, in order) to `model` on
  // the server at `base_url` as ONE batch. The caller sets the timeout and token.
  virtual net::HttpRequest batch_request(const std::string& base_url, const std::string& model,
                                         const std::vector<const std::string*>& inputs) const = 0;
  // False when inputs `a` and `b` cannot travel in one request (the v2 wire:
  // tensor queries of different layouts); the batch then goes as several.
  virtual bool same_request(const std::string& /*a*/, const std::string& /*b*/) const { return true; }
  // One compact JSON text per input, in order, from a 2xx answer; a per-input
  // error in batch_codec.h's shape {"error": {"code","type","message"}}.
  // Throws BatchCodecError (batch_codec.h) when the body is not the
  // protocol's answer for `expected` inputs.
  virtual std::vector<std::string> decode_batch(const std::string& body, size_t expected) const = 0;
  // The health probe of a worker; `model` is the model its last batch ran.
  virtual net::HttpRequest health_request(const std::string& base_url, const std::string& model) const = 0;
  virtual bool healthy(const net::HttpResponse& response) const = 0;
  // True when a non-2xx answer to a batch says the model is not ready
  // (MLServer answers 400 "Model M is not ready yet."; TorchServe 503 "has no
  // worker to serve inference request"): the worker cannot serve it now, so
  // the batch goes elsewhere instead of being bisected as the model's refusal
  // of its inputs, and counts as the worker's failure (TorchServe's answer is
  // the same when its job queue is full).
  virtual bool not_ready(const net::HttpResponse& /*response*/) const { return false; }
  // Bytes a batch body adds beyond its inputs' base64 strings and commas
  // (request_split.h's estimate covers the batch contract's own 13).
  virtual std::int64_t envelope_bytes() const { return 0; }
};

// TorchServe's inference API: POST /predictions/{model} under lull's batch
// contract, GET /ping answering "Healthy", not ready on its 503 "no worker".
const BatchWire& torchserve_wire();

}  // namespace lull::torchserve
