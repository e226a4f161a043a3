#pragma once
// ModelControl (runtime/core/model_control.h) over TorchServe's management API: a
// worker is its management URL; a model is registered from the archive
// `archive_template` with {model} replaced (default "{model}.mar", a file in
// TorchServe's model store), with one worker, synchronously.
#include <string>

#include "runtime/core/model_control.h"
#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/model_management.h"

namespace lull::torchserve {

class TorchServeModelControl final : public core::ModelControl {
 public:
  // `client` must outlive this.
  TorchServeModelControl(net::HttpTransport& client, ModelManagementOptions options = {},
                         std::string archive_template = "{model}.mar");
  void load(const std::string& management_url, const std::string& model) override;
  void unload(const std::string& management_url, const std::string& model) override;

 private:
  net::HttpTransport& client_;
  ModelManagementOptions options_;
  std::string archive_template_;
};

}  // namespace lull::torchserve
