// Worker slots over the simulator's Dispatcher (why: see dispatcher_slots.h).
#include "runtime/sim/dispatcher_slots.h"

namespace lull::sim {

void DispatcherSlots::join(int slot, const std::string&, const std::string&) {
  dispatcher_.set_worker_available(slot, true);
}

void DispatcherSlots::drain(int slot, std::function<void()> drained) {
  dispatcher_.set_worker_available(slot, false);
  drains_.begin(slot, dispatcher_.busy(slot), std::move(drained));
}

void DispatcherSlots::leave(int slot, const std::string&) {
  if (dispatcher_.worker_available(slot)) dispatcher_.set_worker_available(slot, false);
}

void DispatcherSlots::on_batch_done(int slot) {
  if (drains_.draining(slot) && !dispatcher_.busy(slot)) drains_.on_idle(slot);
}

}  // namespace lull::sim
