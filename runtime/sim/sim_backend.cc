#include "runtime/sim/sim_backend.h"

#include <stdexcept>
#include <string>

namespace lull::sim {

SimBackend::SimBackend(int workers, EventQueue& events, core::VirtualClock& clock, LatencyModel& latency)
    : events_(events),
      clock_(clock),
      latency_(latency),
      running_(static_cast<std::size_t>(workers)),
      busy_(static_cast<std::size_t>(workers), 0),
      after_end_(static_cast<std::size_t>(workers), 0),
      batch_no_(static_cast<std::size_t>(workers), 0) {}

void SimBackend::start_batch(const core::BatchRequest& batch) {
  if (batch.worker < 0 || batch.worker >= static_cast<int>(running_.size()))
    throw std::logic_error("batch for unknown worker " + std::to_string(batch.worker));
  if (busy_[batch.worker]) throw std::logic_error("worker " + std::to_string(batch.worker) + " got a batch while busy");
  if (batch.queries.empty()) throw std::logic_error("empty batch");
  if (on_start_) on_start_(batch);
  auto& slot = running_[batch.worker];
  slot.worker = batch.worker;
  slot.model = batch.model;
  slot.ok = true;
  slot.error.clear();
  slot.queries.assign(batch.queries.begin(), batch.queries.end());
  busy_[batch.worker] = 1;
  ++in_flight_;
  after_end_[batch.worker] = end_us_ > 0 && clock_.now_us() >= end_us_;
  const auto lat_us =
      after_end_[batch.worker] ? 0 : latency_.batch_latency_us(batch.model, static_cast<int>(batch.queries.size()));
  events_.push(clock_.now_us() + lat_us, batch.worker, ++batch_no_[batch.worker]);
}

void SimBackend::complete(int worker, std::uint32_t batch) {
  if (!busy_[worker] || batch != batch_no_[worker]) return;  // a failed batch's event
  finish(worker);
}

void SimBackend::fail_in_flight(int worker) {
  if (!busy_[worker]) return;
  ++batch_no_[worker];  // its completion event is stale now
  running_[worker].ok = false;
  running_[worker].error = "worker failed (--fail)";
  finish(worker);
}

void SimBackend::finish(int worker) {
  auto& slot = running_[worker];
  done_.worker = slot.worker;
  done_.model = slot.model;
  done_.ok = slot.ok;
  done_.error = slot.error;
  done_.queries.swap(slot.queries);  // the slot may be refilled from inside report()
  busy_[worker] = 0;
  --in_flight_;
  reporting_undispatched_ = after_end_[worker];
  report(done_);
  reporting_undispatched_ = false;
}

}  // namespace lull::sim
