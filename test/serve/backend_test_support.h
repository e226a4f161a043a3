#pragma once
// A test double around the TorchServe backend: a collector of reported
// batches with a bounded wait.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "runtime/backend.h"

namespace lull::serve::testing {

class ResultLog {
 public:
  void add(const runtime::BatchResult& r) {
    std::lock_guard<std::mutex> lock(mu_);
    results_.push_back(r);
    cv_.notify_all();
  }
  // Waits (bounded) until at least n results arrived; returns a copy of all.
  std::vector<runtime::BatchResult> wait_for(size_t n, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [&] { return results_.size() >= n; });
    return results_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<runtime::BatchResult> results_;
};

}  // namespace lull::serve::testing
