#pragma once
// ModelControl (model_set_change.h) over TorchServe's management API: a
// worker is its management URL; a model is registered from the archive
// `archive_template` with {model} replaced (default "{model}.mar", a file in
// TorchServe's model store), with one worker, synchronously.
#include <string>

#include "runtime/manager/model_set_change.h"
#include "runtime/net/http_client.h"
#include "runtime/torchserve/model_management.h"

namespace lull::manager {

class TorchServeModelControl final : public ModelControl {
 public:
  // `client` must outlive this.
  TorchServeModelControl(serve::HttpClient& client, serve::ModelManagementOptions options = {},
                         std::string archive_template = "{model}.mar");
  void load(const std::string& management_url, const std::string& model) override;
  void unload(const std::string& management_url, const std::string& model) override;

 private:
  serve::HttpClient& client_;
  serve::ModelManagementOptions options_;
  std::string archive_template_;
};

}  // namespace lull::manager
