#pragma once
// The simulator's WorkerSlots (runtime/core/worker_slots.h): a worker joining a
// slot makes the Dispatcher's slot available; draining takes it out (its
// queue moves to the others) and DrainTracker says when its batch in flight
// is done; leaving takes it out if it was still in. The serving side's
// counterpart puts slots into a ServeSession (manager/session_slots.h).
#include <functional>
#include <string>

#include "runtime/core/dispatcher.h"
#include "runtime/core/drain_tracker.h"
#include "runtime/core/worker_slots.h"

namespace lull::sim {

class DispatcherSlots final : public core::WorkerSlots {
 public:
  // `dispatcher` must outlive this.
  explicit DispatcherSlots(core::Dispatcher& dispatcher) : dispatcher_(dispatcher) {}
  int slot_count() const override { return dispatcher_.pool_workers(); }
  void join(int slot, const std::string& inference_url, const std::string& management_url) override;
  void drain(int slot, std::function<void()> drained) override;
  void leave(int slot, const std::string& why) override;
  bool healthy(int slot) const override { return dispatcher_.worker_available(slot); }
  // After a batch on `slot` completed: a draining slot with nothing left in flight is drained.
  void on_batch_done(int slot);

 private:
  core::Dispatcher& dispatcher_;
  core::DrainTracker drains_;
};

}  // namespace lull::sim
