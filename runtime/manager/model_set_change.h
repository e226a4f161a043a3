#pragma once
// Changing the models the workers hold, make-before-break (model
// variants): load every new model on every worker first; let the policy use
// a new model only once every worker has it loaded (ready); stop using the
// models that go, and only then unload them. So no query is ever sent to a
// model that is not loaded, whichever order the steps finish in. A model
// that fails to load on some worker is not used and is unloaded from the
// workers where it did load (it would only take memory); the failure is
// reported with the worker and TorchServe's reason. Needs memory for the old
// and the new models at once during the change.
//
// The loading itself is behind ModelControl (runtime/core/model_control.h):
// TorchServe's management API (torchserve/torchserve_model_control.h) or a
// test fake.
#include <functional>
#include <string>
#include <vector>

#include "runtime/core/model_control.h"

namespace lull::manager {

using core::ModelControl;

struct ModelSetChange {
  std::vector<std::string> in_use;    // what the policy may use after the change (the set given to `use`)
  std::vector<std::string> loaded;    // new models now ready on every worker
  std::vector<std::string> unloaded;  // models removed from every worker
  std::vector<std::string> failures;  // "worker W: loading M: reason", one per failed call
};

// `current`: the models every worker holds and the policy uses now;
// `target`: the plan's. Calls use(in_use) once, after the loads and before
// the unloads. Workers are handled one after another in the order given.
// With `all_or_nothing` (a variant switch: the policies were compiled for
// exactly `target`), a model that fails to load cancels the change: the new
// models are taken back off, `use` is not called, nothing of `current` is
// unloaded, and in_use is `current`.
ModelSetChange change_model_set(ModelControl& control, const std::vector<std::string>& workers,
                                const std::vector<std::string>& current, const std::vector<std::string>& target,
                                const std::function<void(const std::vector<std::string>& in_use)>& use,
                                bool all_or_nothing = false);

}  // namespace lull::manager
