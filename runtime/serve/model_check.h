#pragma once
// Start-up check through TorchServe's management API: every model the
// policies name must be loaded (with at least one worker) on every model
// server. Reports everything missing at once, so one run shows the whole fix.
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/serve/http_client.h"
#include "runtime/serve/worker_endpoint.h"

namespace lull::serve {

struct ModelCheckError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// GET {management}/models/{name} for each worker and model. Throws
// ModelCheckError with one line naming, per worker, the models it lacks (and
// those it has), or why it could not be asked.
void check_models_loaded(HttpClient& client, const std::vector<WorkerEndpoint>& workers,
                         const std::vector<std::string>& models, std::int64_t timeout_ms = 2000);

}  // namespace lull::serve
