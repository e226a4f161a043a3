#pragma once
// Start-up check over the Open Inference Protocol: every model the policies
// name must be ready on every server (GET /v2/models/{m}/ready), and take the
// input lull sends (GET /v2/models/{m}, the model metadata: its one declared
// input, or the one named by --v2-input-name among those it lists). Everything missing is reported
// at once, as the TorchServe check does (model_check.h), in its error type.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::v2 {

struct V2ModelCheckOptions {
  // The input lull's requests carry (V2Wire): given (--v2-input-name), every
  // model must list it; "" takes each model's own when its metadata declares
  // exactly one input (else "input", which a model declaring several must list).
  std::string input_name;
  std::int64_t timeout_ms = 2000;
  // When set: filled with model -> its one declared input's name, for the wire (V2Wire::learn_input_names).
  std::map<std::string, std::string>* declared = nullptr;
  // When set: filled with the inference URLs of the servers whose metadata
  // (GET /v2) lists the "binary_tensor_data" extension (V2Wire::learn_binary_servers).
  std::set<std::string>* binary_servers = nullptr;
};

// Throws ModelCheckError with one line naming, per worker, the models not
// ready there (and why: absent, not ready, another input name), or why the
// server could not be asked.
void check_v2_models_ready(net::HttpTransport& client, const std::vector<torchserve::WorkerEndpoint>& workers,
                           const std::vector<std::string>& models, const V2ModelCheckOptions& options = {});

}  // namespace lull::v2
