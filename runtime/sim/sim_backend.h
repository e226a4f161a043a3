#pragma once
// The simulated backend: a batch occupies its worker for a latency drawn from
// the latency model; completion is an event on the simulator's queue.
// With a dispatch end (the reference's end of run, mdp-spec 8), a batch
// started at or after it is not run: it completes at once and is flagged so
// that its queries count as "not dispatched at end", not as served.
#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/clock.h"
#include "runtime/sim/event_queue.h"
#include "runtime/sim/latency_model.h"

namespace lull::sim {

class SimBackend final : public core::Backend {
 public:
  SimBackend(int workers, EventQueue& events, core::VirtualClock& clock, LatencyModel& latency);
  void start_batch(const core::BatchRequest& batch) override;
  // Called by the event loop when the worker's completion event fires;
  // `batch` is the event's batch number (events of failed batches are stale
  // and ignored).
  void complete(int worker, std::uint32_t batch);
  // --fail: the worker's batch in flight, if any, fails now (reported with
  // ok = false, so the Dispatcher retries it elsewhere); its completion
  // event becomes stale.
  void fail_in_flight(int worker);
  bool busy(int worker) const { return busy_[static_cast<std::size_t>(worker)] != 0; }
  int in_flight() const { return in_flight_; }
  // Batches started at or after end_us are not run (0: no end).
  void set_dispatch_end_us(std::int64_t end_us) { end_us_ = end_us; }
  // During a completion report: whether that batch started after the end.
  bool reporting_undispatched() const { return reporting_undispatched_; }
  // Told of every batch as it starts (--variant-sets counts its queries
  // under the variant in use).
  void set_on_start(std::function<void(const core::BatchRequest&)> f) { on_start_ = std::move(f); }

 private:
  EventQueue& events_;
  core::VirtualClock& clock_;
  LatencyModel& latency_;
  std::vector<core::BatchResult> running_;  // one slot per worker
  std::vector<char> busy_;
  void finish(int worker);
  std::vector<char> after_end_;          // per worker: its batch started after the end
  std::vector<std::uint32_t> batch_no_;  // per worker: number of its current batch
  std::int64_t end_us_ = 0;
  bool reporting_undispatched_ = false;
  core::BatchResult done_;  // reused buffer handed to the completion handler
  int in_flight_ = 0;
  std::function<void(const core::BatchRequest&)> on_start_;
};

}  // namespace lull::sim
