#pragma once
// Loading and unloading models on a worker: the seam between the manager's
// make-before-break model-set changes (manager/model_set_change.h) and a
// model server's management API (torchserve/torchserve_model_control.h) or
// a test fake. In the core so that the TorchServe layer implements it
// without including the manager above it.
#include <string>

namespace lull::core {

class ModelControl {
 public:
  virtual ~ModelControl() = default;
  // Loads the model on the worker and returns when it is ready; throws
  // std::exception with the reason when it cannot.
  virtual void load(const std::string& worker, const std::string& model) = 0;
  virtual void unload(const std::string& worker, const std::string& model) = 0;
};

}  // namespace lull::core
