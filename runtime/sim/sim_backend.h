#pragma once
// The simulated backend: a batch occupies its worker for a latency drawn from
// the latency model; completion is an event on the simulator's queue.
#include <vector>

#include "runtime/backend.h"
#include "runtime/clock.h"
#include "runtime/sim/event_queue.h"
#include "runtime/sim/latency_model.h"

namespace lull::sim {

class SimBackend final : public runtime::Backend {
 public:
  SimBackend(int workers, EventQueue& events, runtime::VirtualClock& clock, LatencyModel& latency);
  void start_batch(const runtime::BatchRequest& batch) override;
  // Called by the event loop when the worker's completion event fires.
  void complete(int worker);
  int in_flight() const { return in_flight_; }

 private:
  EventQueue& events_;
  runtime::VirtualClock& clock_;
  LatencyModel& latency_;
  std::vector<runtime::BatchResult> running_;  // one slot per worker
  std::vector<char> busy_;
  runtime::BatchResult done_;  // reused buffer handed to the completion handler
  int in_flight_ = 0;
};

}  // namespace lull::sim
