#include "runtime/core/query_inputs.h"

namespace lull::core {

void QueryInputs::put(QueryId id, std::string input) {
  auto p = std::make_shared<const std::string>(std::move(input));
  std::lock_guard<std::mutex> lock(mu_);
  inputs_[id] = std::move(p);
}

std::shared_ptr<const std::string> QueryInputs::get(QueryId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = inputs_.find(id);
  return it == inputs_.end() ? nullptr : it->second;
}

void QueryInputs::erase(QueryId id) {
  std::lock_guard<std::mutex> lock(mu_);
  inputs_.erase(id);
}

std::size_t QueryInputs::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return inputs_.size();
}

}  // namespace lull::core
