#pragma once
// The serving side of a variant switch (variant_switcher.h's PolicySwap)
// over a live ServeSession: its swap_policies_and_wait, with a time limit
// for the batches in flight on the models that go. One adapter for
// `lull serve --variant-sets` and the tests.
#include <cstdint>
#include <vector>

#include "runtime/manager/variant_switcher.h"
#include "runtime/session/serve_session.h"

namespace lull::pools {

class SessionPolicySwap final : public manager::PolicySwap {
 public:
  // `session` must outlive this.
  SessionPolicySwap(session::ServeSession& session, std::int64_t drain_timeout_ms)
      : session_(session), timeout_ms_(drain_timeout_ms) {}
  void swap(const std::vector<core::PolicyTable>& tables, const std::vector<int>& dropped) override {
    session_.swap_policies_and_wait(tables, dropped, timeout_ms_);
  }

 private:
  session::ServeSession& session_;
  std::int64_t timeout_ms_;
};

}  // namespace lull::pools
