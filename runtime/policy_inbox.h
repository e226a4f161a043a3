#pragma once
// Where a background compilation drops a finished policy table for the
// Dispatcher to pick up. The Dispatcher's thread checks has_mail() (one
// relaxed atomic load) on each arrival and takes the mutex only when there is
// something to take, so a compilation never holds up selection; the producer
// holds the mutex only for a push_back.
#include <atomic>
#include <mutex>
#include <vector>

#include "runtime/policy_table.h"

namespace lull::runtime {

class PolicyInbox {
 public:
  void post(PolicyTable table) {
    std::lock_guard<std::mutex> lock(mu_);
    tables_.push_back(std::move(table));
    pending_.store(static_cast<int>(tables_.size()), std::memory_order_release);
  }
  bool has_mail() const { return pending_.load(std::memory_order_acquire) != 0; }
  std::vector<PolicyTable> take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<PolicyTable> out;
    out.swap(tables_);
    pending_.store(0, std::memory_order_release);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<PolicyTable> tables_;
  std::atomic<int> pending_{0};
};

}  // namespace lull::runtime
