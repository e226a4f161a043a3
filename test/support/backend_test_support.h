#pragma once
// Test helpers around the HTTP batch backend: a collector of reported
// batches with a bounded wait, a batch request (with its queries' inputs,
// as the serve session fills it), and a bounded poll.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/core/backend.h"

namespace lull::serve::testing {

class ResultLog {
 public:
  void add(const core::BatchResult& r) {
    std::lock_guard<std::mutex> lock(mu_);
    results_.push_back(r);
    cv_.notify_all();
  }
  // Waits (bounded) until at least n results arrived; returns a copy of all.
  std::vector<core::BatchResult> wait_for(size_t n, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [&] { return results_.size() >= n; });
    return results_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<core::BatchResult> results_;
};

inline core::BatchRequest batch(int worker, int model, std::vector<core::QueryId> ids) {
  core::BatchRequest b;
  b.worker = worker;
  b.model = model;
  b.queries = std::move(ids);
  return b;
}

// The queries' inputs, as the serve session keeps each (PendingQuery::input):
// a batch made here carries them (BatchRequest::inputs).
class QueryInputsForTest {
 public:
  void put(core::QueryId id, std::string input) { inputs_[id] = std::make_shared<const std::string>(std::move(input)); }
  // A query without an input travels empty (nullptr), like one answered meanwhile.
  core::BatchRequest batch(int worker, int model, std::vector<core::QueryId> ids) const {
    core::BatchRequest b = testing::batch(worker, model, std::move(ids));
    for (const core::QueryId id : b.queries) {
      const auto it = inputs_.find(id);
      b.inputs.push_back(it == inputs_.end() ? nullptr : it->second);
    }
    return b;
  }

 private:
  std::unordered_map<core::QueryId, std::shared_ptr<const std::string>> inputs_;
};

// Polls `cond` every 20 ms for at most `limit`.
template <class F>
bool eventually(F cond, std::chrono::milliseconds limit) {
  for (auto t = std::chrono::milliseconds(0); t < limit; t += std::chrono::milliseconds(20)) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

}  // namespace lull::serve::testing
