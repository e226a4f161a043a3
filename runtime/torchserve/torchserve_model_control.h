#pragma once
// ModelControl (runtime/model_control.h) over TorchServe's management API: a
// worker is its management URL; a model is registered from the archive
// `archive_template` with {model} replaced (default "{model}.mar", a file in
// TorchServe's model store), with one worker, synchronously.
#include <string>

#include "runtime/model_control.h"
#include "runtime/net/http_transport.h"
#include "runtime/torchserve/model_management.h"

namespace lull::serve {

class TorchServeModelControl final : public runtime::ModelControl {
 public:
  // `client` must outlive this.
  TorchServeModelControl(HttpTransport& client, ModelManagementOptions options = {},
                         std::string archive_template = "{model}.mar");
  void load(const std::string& management_url, const std::string& model) override;
  void unload(const std::string& management_url, const std::string& model) override;

 private:
  HttpTransport& client_;
  ModelManagementOptions options_;
  std::string archive_template_;
};

}  // namespace lull::serve
