#pragma once
// Where a background compilation drops a finished policy table for the
// Dispatcher to pick up: one to add (online compilation) or one that
// replaces the policies of its worker count (--recompile-on-drift). The Dispatcher's thread checks has_mail() (one
// relaxed atomic load) on each arrival and takes the mutex only when there is
// something to take, so a compilation never holds up selection; the producer
// holds the mutex only for a push_back.
#include <atomic>
#include <mutex>
#include <vector>

#include "runtime/core/policy_table.h"

namespace lull::core {

// One delivery: `replaces` says whether the table joins the catalog
// (PolicyCatalog::add) or replaces its worker count's policies
// (PolicyCatalog::replace). Messages are applied in the order posted.
struct PolicyMail {
  PolicyTable table;
  bool replaces = false;
};

class PolicyInbox {
 public:
  void post(PolicyTable table) { post_mail(PolicyMail{std::move(table), false}); }
  void post_replacement(PolicyTable table) { post_mail(PolicyMail{std::move(table), true}); }
  bool has_mail() const { return pending_.load(std::memory_order_acquire) != 0; }
  std::vector<PolicyMail> take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<PolicyMail> out;
    out.swap(tables_);
    pending_.store(0, std::memory_order_release);
    return out;
  }

 private:
  void post_mail(PolicyMail mail) {
    std::lock_guard<std::mutex> lock(mu_);
    tables_.push_back(std::move(mail));
    pending_.store(static_cast<int>(tables_.size()), std::memory_order_release);
  }
  std::mutex mu_;
  std::vector<PolicyMail> tables_;
  std::atomic<int> pending_{0};
};

}  // namespace lull::core
