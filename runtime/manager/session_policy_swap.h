#pragma once
// The serving side of a variant switch (variant_switcher.h's PolicySwap)
// over a live ServeSession: its swap_policies_and_wait, with a time limit
// for the batches in flight on the models that go. One adapter for
// `lull serve --variant-sets` and the tests.
#include <cstdint>
#include <vector>

#include "runtime/manager/variant_switcher.h"
#include "runtime/serve/serve_session.h"

namespace lull::manager {

class SessionPolicySwap final : public PolicySwap {
 public:
  // `session` must outlive this.
  SessionPolicySwap(serve::ServeSession& session, std::int64_t drain_timeout_ms)
      : session_(session), timeout_ms_(drain_timeout_ms) {}
  void swap(const std::vector<runtime::PolicyTable>& tables, const std::vector<int>& dropped) override {
    session_.swap_policies_and_wait(tables, dropped, timeout_ms_);
  }

 private:
  serve::ServeSession& session_;
  std::int64_t timeout_ms_;
};

}  // namespace lull::manager
