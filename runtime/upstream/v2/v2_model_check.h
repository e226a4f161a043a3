#pragma once
// Start-up check over the Open Inference Protocol: every model the policies
// name must be ready on every server (GET /v2/models/{m}/ready), and take the
// BYTES input lull sends (GET /v2/models/{m}, the model metadata: its
// "inputs" must name it when they list any). Everything missing is reported
// at once, as the TorchServe check does (model_check.h), in its error type.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::v2 {

struct V2ModelCheckOptions {
  std::string input_name = "input";  // the input lull's requests carry (V2Wire)
  std::int64_t timeout_ms = 2000;
};

// Throws ModelCheckError with one line naming, per worker, the models not
// ready there (and why: absent, not ready, another input name), or why the
// server could not be asked.
void check_v2_models_ready(net::HttpTransport& client, const std::vector<torchserve::WorkerEndpoint>& workers,
                           const std::vector<std::string>& models, const V2ModelCheckOptions& options = {});

}  // namespace lull::v2
