#include "runtime/serve/query_book.h"

namespace lull::serve {

std::pair<runtime::QueryId, std::future<QueryOutcome>> QueryBook::add(std::string input) {
  std::lock_guard<std::mutex> lock(mu_);
  const runtime::QueryId id = ++next_id_;
  Entry& e = entries_[id];
  e.input = std::make_shared<const std::string>(std::move(input));
  return {id, e.promise.get_future()};
}

bool QueryBook::complete(runtime::QueryId id, QueryOutcome outcome) {
  std::promise<QueryOutcome> promise;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return false;
    promise = std::move(it->second.promise);
    entries_.erase(it);
  }
  promise.set_value(std::move(outcome));
  return true;
}

void QueryBook::abandon(runtime::QueryId id) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(id);
}

std::string QueryBook::output(runtime::QueryId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? "" : it->second.output;
}

size_t QueryBook::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::shared_ptr<const std::string> QueryBook::input(runtime::QueryId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.input;
}

void QueryBook::set_output(runtime::QueryId id, std::string prediction_json) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.output = std::move(prediction_json);
}

}  // namespace lull::serve
