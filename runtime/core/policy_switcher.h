#pragma once
// Picks the policy for an estimated load: the one compiled for the lowest load
// >= the estimate; above the grid, the highest one plus a "new policy needed"
// event (raised once each time the estimate leaves the grid).
#include <cstdint>
#include <functional>
#include <vector>

namespace lull::core {

struct NewPolicyNeeded {
  std::int64_t time_us = 0;
  double estimated_qps = 0;
  double highest_compiled_qps = 0;
};

class PolicySwitcher {
 public:
  explicit PolicySwitcher(std::vector<double> grid_loads_qps);  // ascending
  // Returns the grid index now in use; true in *changed when it moved.
  int update(double estimated_qps, std::int64_t now_us, bool* changed = nullptr);
  int current() const { return current_; }
  int events_raised() const { return events_; }
  void on_new_policy_needed(std::function<void(const NewPolicyNeeded&)> f) { on_event_ = std::move(f); }

 private:
  std::vector<double> loads_;
  int current_ = 0;
  bool above_grid_ = false;
  int events_ = 0;
  std::function<void(const NewPolicyNeeded&)> on_event_;
};

}  // namespace lull::core
