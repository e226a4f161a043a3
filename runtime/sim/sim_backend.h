#pragma once
// The simulated backend: a batch occupies its worker for a latency drawn from
// the latency model; completion is an event on the simulator's queue.
// With a dispatch end (the reference's end of run, mdp-spec 8), a batch
// started at or after it is not run: it completes at once and is flagged so
// that its queries count as "not dispatched at end", not as served.
#include <cstdint>
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
  // Batches started at or after end_us are not run (0: no end).
  void set_dispatch_end_us(std::int64_t end_us) { end_us_ = end_us; }
  // During a completion report: whether that batch started after the end.
  bool reporting_undispatched() const { return reporting_undispatched_; }

 private:
  EventQueue& events_;
  runtime::VirtualClock& clock_;
  LatencyModel& latency_;
  std::vector<runtime::BatchResult> running_;  // one slot per worker
  std::vector<char> busy_;
  std::vector<char> after_end_;  // per worker: its batch started after the end
  std::int64_t end_us_ = 0;
  bool reporting_undispatched_ = false;
  runtime::BatchResult done_;  // reused buffer handed to the completion handler
  int in_flight_ = 0;
};

}  // namespace lull::sim
