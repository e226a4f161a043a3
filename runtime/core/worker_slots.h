#pragma once
// Where a worker pool's workers meet the Dispatcher: its fixed worker slots.
// A worker that comes up takes a free slot (SlotMap) and joins the rotation
// there; one being removed drains (no new batches, its queue moves to the
// others, `drained` once its batch in flight is done) and then leaves. The
// serving implementation puts the slot into the ServeSession and the
// TorchServe backend (manager/session_slots.h); the simulator's makes the
// Dispatcher's slot available (sim/autoscaled_workers.cc). The autoscaling
// code that decides who joins and leaves is the same for both.
#include <functional>
#include <string>

namespace lull::core {

class WorkerSlots {
 public:
  virtual ~WorkerSlots() = default;
  // How many slots there are (all vacant at first, unless the owner says otherwise).
  virtual int slot_count() const = 0;
  // The worker now in `slot` is up: into the rotation. Its URLs (empty in the simulator).
  virtual void join(int slot, const std::string& inference_url, const std::string& management_url) = 0;
  // Out of the rotation now; `drained` runs once, when the slot has no batch
  // in flight (possibly before this returns).
  virtual void drain(int slot, std::function<void()> drained) = 0;
  // The worker is gone (stopped or failed, `why`): out of rotation, and what
  // it still had in flight goes to the others; the slot is vacant.
  virtual void leave(int slot, const std::string& why) = 0;
  // Whether the slot's worker passes its own health checks (not ejected,
  // pings answered); one that does not is up in its pool but out of rotation.
  virtual bool healthy(int slot) const = 0;
};

}  // namespace lull::core
