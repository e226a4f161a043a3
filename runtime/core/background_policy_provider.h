#pragma once
// Online compilation for a live server: one background thread (LatestWins)
// runs the PolicyCompiler and posts each result to the Dispatcher's
// PolicyInbox, so a compilation never runs on, or blocks, the thread that
// selects. Requests made while it is busy wait; a newer one replaces the
// waiting one (only the latest situation matters; the simulator's
// VirtualTimeProvider follows the same rule). Counters for /metrics.
#include <functional>
#include <mutex>
#include <string>

#include "runtime/core/latest_wins.h"
#include "runtime/core/policy_inbox.h"
#include "runtime/core/policy_provider.h"

namespace lull::core {

struct OnlineCompileStats {
  std::uint64_t compilations = 0;  // finished, delivered
  std::uint64_t failures = 0;
  double seconds_sum = 0;  // wall time of the finished ones
  double last_seconds = 0;
};

class BackgroundPolicyProvider final : public PolicyProvider {
 public:
  // `log` (optional) receives one line per compilation or failure.
  explicit BackgroundPolicyProvider(PolicyCompiler& compiler, std::function<void(const std::string&)> log = nullptr);
  ~BackgroundPolicyProvider() override;  // finishes the compilation in progress, drops a waiting one

  // Where results go; set before the first request (the Dispatcher's inbox).
  // disconnect() before the inbox dies: later results are dropped.
  void connect(PolicyInbox& inbox);
  void disconnect();
  void request(const PolicyRequest& request) override;
  OnlineCompileStats stats() const;
  // Blocks until nothing is running or waiting (tests, shutdown).
  void wait_idle();
  // Stops: drops the waiting request and abandons the compilation under way
  // (PolicyCompiler::cancel), so the destructor's wait is one solver step.
  void abandon();

 private:
  void compile(const PolicyRequest& r);  // on the worker's thread
  PolicyCompiler& compiler_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;  // inbox_, stats_
  PolicyInbox* inbox_ = nullptr;
  OnlineCompileStats stats_;
  LatestWins<PolicyRequest> worker_;  // last: its thread reads everything above
};

}  // namespace lull::core
