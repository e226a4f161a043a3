#pragma once
// Loading and unloading models on one model server through TorchServe's
// management API (register, unregister, list), for the resource manager's
// model variants: when the plan changes the models a worker holds, lull loads
// the new ones (synchronously, so "loaded" means a worker is READY) before
// the policy uses them and unloads the old ones after it stops. The stand-in
// server (test/modelserver) implements the same endpoints.
//
//   POST   /models?url=U&model_name=M&initial_workers=1&synchronous=true
//          200 {"status": "Model \"M\" Version: 1.0 registered with 1 initial workers"}
//          404 ModelNotFoundException (no such archive), 409 ConflictStatusException
//          (already registered), 500 InternalServerException ("Failed to start
//          workers for model M version: 1.0": the model failed to load)
//   DELETE /models/M       200 {"status": "Model \"M\" unregistered"}; 404 when not registered
//   GET    /models         {"models": [{"modelName", "modelUrl"}], "nextPageToken"?}
#include <cstdint>
#include <stdexcept>
#include <functional>
#include <string>
#include <vector>

#include "runtime/net/http_transport.h"

namespace lull::torchserve {

// Why a management call failed, in one line naming the server, the call and
// TorchServe's own reason; `status` is the HTTP status (0: no answer).
struct ModelManagementError : std::runtime_error {
  ModelManagementError(const std::string& what, int status) : std::runtime_error(what), status(status) {}
  int status;
};

struct ModelManagementOptions {
  std::string management_key;  // TorchServe's management key; empty: no Authorization header
  // Where the key comes from when it can change (TorchServe rotates its keys:
  // TorchServeKeyFile); overrides management_key. Called with `refused`
  // true after the server refused the key it gave, to read it again; a call
  // refused for a key that has since changed is sent once more.
  std::function<std::string(bool refused)> key_source;
  // The same per server, by its management URL (TorchServeKeyFiles per
  // server); overrides key_source when set.
  std::function<std::string(const std::string& management_url, bool refused)> server_key_source;
  std::int64_t timeout_ms = 120000;  // a synchronous register waits for the model to load
};

class ModelManagementClient {
 public:
  // `client` must outlive this; `management_url` is a base URL (http://host:port).
  ModelManagementClient(net::HttpTransport& client, std::string management_url, ModelManagementOptions options = {});

  // Registers the archive `archive_url` as `model_name` with one worker and
  // waits until it is loaded. Returns TorchServe's status line. Throws
  // ModelManagementError (a model that fails to load: HTTP 500 with
  // TorchServe's message).
  std::string load(const std::string& model_name, const std::string& archive_url);
  // Unregisters the model. Returns the status line; throws ModelManagementError.
  std::string unload(const std::string& model_name);
  // The registered models' names, every page. Throws ModelManagementError.
  std::vector<std::string> list();

 private:
  net::HttpResponse call(const std::string& method, const std::string& path_and_query);
  [[noreturn]] void fail(const std::string& what, const net::HttpResponse& r) const;

  net::HttpTransport& client_;
  std::string url_;
  ModelManagementOptions options_;
};

// "HTTP 500 InternalServerException: Failed to start workers ..." from a
// TorchServe error body {"code", "type", "message"}; the transport error or
// "HTTP N" when the body is not one.
std::string describe_torchserve_error(const net::HttpResponse& r);
// Percent-encodes a query parameter value (RFC 3986 unreserved characters kept).
std::string url_encode(const std::string& s);

}  // namespace lull::torchserve
