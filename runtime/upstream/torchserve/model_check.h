#pragma once
// Start-up check through TorchServe's management API: every model the
// policies name must be loaded (with at least one worker) on every model
// server. Reports everything missing at once, so one run shows the whole fix.
// It also reads each model's batchSize and maxBatchDelay: lull sends a whole
// batch as ONE request, so a model that TorchServe batches itself (batchSize
// > 1 with maxBatchDelay > 0) holds each of lull's batches up to that delay
// waiting for company that never comes; lull expects batchSize 1.
#include <cstdint>
#include <stdexcept>
#include <functional>
#include <string>
#include <vector>

#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::torchserve {

struct ModelCheckError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ModelCheckOptions {
  std::string management_key;  // TorchServe's management key; empty: no Authorization header
  // Each server's own key by its management URL (TorchServeKeyFiles per
  // server); overrides management_key when set.
  std::function<std::string(const std::string& management_url)> management_key_for;
  std::int64_t timeout_ms = 2000;
};

// GET {management}/models/{name} for each worker and model. Throws
// ModelCheckError with one line naming, per worker, the models it lacks (and
// those it has), a refused token, or why it could not be asked. Returns one
// warning per (worker, model) whose TorchServe batching would hold lull's
// batches ("worker URL model M: batchSize 8, maxBatchDelay 100 ms: ...").
std::vector<std::string> check_models_loaded(net::HttpTransport& client, const std::vector<WorkerEndpoint>& workers,
                                             const std::vector<std::string>& models,
                                             const ModelCheckOptions& options = {});

// One model's check on one server, for a caller that sends it itself (the
// backend's check of a worker rejoining rotation, torchserve_backend.h):
// GET {management}/models/{model}, and whether its answer says the model is
// loaded (some version has a worker whose status, when given, is READY;
// TorchServe lists a worker still loading the model as UNLOADING).
net::HttpRequest model_check_request(const WorkerEndpoint& worker, const std::string& model,
                                     const ModelCheckOptions& options);
bool model_loaded(const net::HttpResponse& response);

// The warning for one model's GET /models/{name} answer, or "" when its
// batchSize/maxBatchDelay do not hold requests (or are absent).
std::string batching_warning(const std::string& worker_url, const std::string& model, const std::string& body);

// The memory one model takes on its server, in MiB, from a GET /models/{name}
// answer: the largest workers[].memoryUsage (bytes; TorchServe reports each
// model worker process's resident set size, the stand-in server the model's
// parameter and buffer bytes). 0 when the answer has none. `lull profile`
// writes it as the profile's memory_mb.
double model_memory_mb(const std::string& body);

}  // namespace lull::torchserve
