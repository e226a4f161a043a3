#pragma once
// Test doubles around the TorchServe backend: an in-memory QueryPayloads and
// a collector of reported batches with a bounded wait.
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/serve/query_payloads.h"

namespace lull::serve::testing {

class MapPayloads final : public QueryPayloads {
 public:
  void put(runtime::QueryId id, std::string input) {
    std::lock_guard<std::mutex> lock(mu_);
    inputs_[id] = std::make_shared<const std::string>(std::move(input));
  }
  std::shared_ptr<const std::string> input(runtime::QueryId id) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = inputs_.find(id);
    return it == inputs_.end() ? nullptr : it->second;
  }
  void set_output(runtime::QueryId id, std::string json) override {
    std::lock_guard<std::mutex> lock(mu_);
    outputs_[id] = std::move(json);
  }
  std::string output(runtime::QueryId id) {
    std::lock_guard<std::mutex> lock(mu_);
    return outputs_.count(id) ? outputs_[id] : "";
  }

 private:
  std::mutex mu_;
  std::map<runtime::QueryId, std::shared_ptr<const std::string>> inputs_;
  std::map<runtime::QueryId, std::string> outputs_;
};

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
