#pragma once
// Online compilation in the simulator, deterministic: one compiler, as in
// lull serve (BackgroundPolicyProvider), that takes `delay` of virtual time
// per compilation. A request made while it is busy waits, and a newer one
// replaces it (the runtime only needs its latest situation: 15 workers
// failing one after another cost two compilations, not fifteen). The real
// compiler (wired in by cli/) runs on the host when a compilation starts;
// only the modelled delay enters the run, so its outcome does not depend on
// how fast or busy the host is.
#include <cstdint>
#include <optional>

#include "runtime/core/clock.h"
#include "runtime/core/policy_provider.h"

namespace lull::sim {

class VirtualTimeProvider final : public core::PolicyProvider {
 public:
  VirtualTimeProvider(core::PolicyCompiler& compiler, const core::Clock& clock, std::int64_t delay_us);
  void request(const core::PolicyRequest& request) override;

  bool has_pending() const { return running_.has_value(); }
  std::int64_t next_ready_us() const { return running_->ready_us; }  // requires has_pending()
  // The running compilation's result; the waiting request (if any) starts
  // now. Call at next_ready_us().
  core::PolicyTable pop_ready();

  int compilations() const { return compilations_; }
  double compile_wall_s() const { return wall_s_; }  // host time spent compiling (not in the outcome)

 private:
  struct Running {
    core::PolicyRequest request;
    std::int64_t ready_us;
    core::PolicyTable table;
  };
  void start(const core::PolicyRequest& request);
  core::PolicyCompiler& compiler_;
  const core::Clock& clock_;
  std::int64_t delay_us_;
  std::optional<Running> running_;
  std::optional<core::PolicyRequest> waiting_;
  int compilations_ = 0;
  double wall_s_ = 0;
};

}  // namespace lull::sim
