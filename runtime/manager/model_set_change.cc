// Make-before-break model changes (why and in which order: see model_set_change.h).
#include "runtime/manager/model_set_change.h"

#include <algorithm>
#include <exception>

namespace lull::manager {

namespace {
bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
}  // namespace

ModelSetChange change_model_set(ModelControl& control, const std::vector<std::string>& workers,
                                const std::vector<std::string>& current, const std::vector<std::string>& target,
                                const std::function<void(const std::vector<std::string>&)>& use, bool all_or_nothing) {
  ModelSetChange out;
  const auto attempt = [&](const std::string& worker, const std::string& model, bool load) {
    try {
      load ? control.load(worker, model) : control.unload(worker, model);
      return true;
    } catch (const std::exception& e) {
      out.failures.push_back("worker " + worker + ": " + (load ? "loading " : "unloading ") + model + ": " + e.what());
      return false;
    }
  };
  // 1. Make: every new model on every worker.
  std::vector<std::string> broken;  // failed somewhere: not used, taken back off
  for (const auto& model : target) {
    if (contains(current, model)) continue;
    std::vector<std::string> holding;
    for (const auto& worker : workers)
      if (attempt(worker, model, true)) holding.push_back(worker);
    if (holding.size() == workers.size()) {
      out.loaded.push_back(model);
    } else {
      for (const auto& worker : holding) attempt(worker, model, false);
      broken.push_back(model);
    }
  }
  if (all_or_nothing && !broken.empty()) {  // cancelled: the new models go, the old set stays in use
    for (const auto& model : out.loaded)
      for (const auto& worker : workers) attempt(worker, model, false);
    out.loaded.clear();
    out.in_use = current;
    return out;
  }
  // 2. Switch: the policy uses what every worker has.
  for (const auto& model : target)
    if (contains(current, model) || contains(out.loaded, model)) out.in_use.push_back(model);
  use(out.in_use);
  // 3. Break: unload what the policy no longer uses.
  for (const auto& model : current) {
    if (contains(target, model)) continue;
    bool everywhere = true;
    for (const auto& worker : workers) everywhere = attempt(worker, model, false) && everywhere;
    if (everywhere) out.unloaded.push_back(model);
  }
  return out;
}

}  // namespace lull::manager
