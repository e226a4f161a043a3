// Model loading through TorchServe's management API (why: see torchserve_model_control.h).
#include "runtime/upstream/torchserve/torchserve_model_control.h"

#include "runtime/core/text_template.h"

namespace lull::torchserve {

TorchServeModelControl::TorchServeModelControl(net::HttpTransport& client, ModelManagementOptions options,
                                               std::string archive_template)
    : client_(client), options_(std::move(options)), archive_template_(std::move(archive_template)) {}

void TorchServeModelControl::load(const std::string& management_url, const std::string& model) {
  torchserve::ModelManagementClient(client_, management_url, options_)
      .load(model, core::fill_template(archive_template_, {{"{model}", model}}));
}

void TorchServeModelControl::unload(const std::string& management_url, const std::string& model) {
  torchserve::ModelManagementClient(client_, management_url, options_).unload(model);
}

}  // namespace lull::torchserve
