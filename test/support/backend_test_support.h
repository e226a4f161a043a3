#pragma once
// Test helpers around the HTTP batch backend: a collector of reported
// batches with a bounded wait, a batch request, and a bounded poll.
#include <chrono>
#include <condition_variable>
#include <mutex>
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
