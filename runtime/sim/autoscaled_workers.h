#pragma once
// `lull simulate --autoscale`: the manager's Autoscaler and
// SimulatedWorkerPool (the same controller code a server would run) wired to
// the simulator's Dispatcher. The pool's workers are mapped onto the
// Dispatcher's worker slots: a worker that comes up takes a free slot and is
// made available; a worker being removed is drained through the pool's
// drain hook (the Dispatcher moves its queue to the others, DrainTracker
// waits for its batch in flight) and frees its slot when stopped. The slots
// are the same SlotMap and WorkerSlots `lull serve --autoscale` uses
// (manager/serving_autoscaler.h), here over the Dispatcher (DispatcherSlots). The
// autoscaler decides every tick of virtual time: a Controller of the
// simulator's ControlLoop, due when that, or a worker coming up, is. Before
// each decision capacity follows the arrival pattern the Dispatcher serves
// (its pattern switcher's choice), by lull serve's rule (PatternCapacity). Worker-seconds
// count every worker from start to stop (starting and draining included:
// they are paid for).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/core/dispatcher.h"
#include "runtime/manager/autoscaler.h"
#include "runtime/manager/pattern_capacity.h"
#include "runtime/manager/simulated_worker_pool.h"
#include "runtime/sim/dispatcher_slots.h"
#include "runtime/core/slot_map.h"

namespace lull::sim {

struct SimAutoscale {
  bool enabled = false;
  manager::AutoscaleOptions options;
  manager::CapacityTarget target;
  std::string provisioning = "fixed:5";  // ProvisioningDelay::parse's spec
  std::uint64_t seed = 1;                // for drawn provisioning delays
};

struct WorkerCountSample {
  double t_s = 0;
  int desired = 0, starting = 0, up = 0, draining = 0;
};

// Capacity read for another arrival pattern (the one served from then on).
struct CapacityPatternChange {
  double t_s = 0;
  ArrivalProcess pattern;
};

struct AutoscaleReport {
  std::string forecast, provisioning;
  manager::AutoscaleOptions options;
  int floor = 0, ceiling = 0;
  std::vector<manager::CapacityRow> capacity;
  manager::CapacityTarget target;
  std::vector<WorkerCountSample> workers_over_time;  // one sample per instant anything changed
  std::vector<manager::ScaleDecision> scale_events;
  std::vector<std::string> log;  // one line per scale event
  std::vector<CapacityPatternChange> capacity_patterns;
  int max_slots_used = 0;
};

class AutoscaledWorkers final : public core::Controller {
 public:
  // Slots 0..initial_up-1 of the Dispatcher are the workers up at the start.
  AutoscaledWorkers(const SimAutoscale& config, const std::vector<core::PolicyTable>& library,
                    core::VirtualClock& clock, int initial_up);
  // Dispatcher slots to create: enough for every worker allowed plus those
  // still draining.
  int slots() const { return 2 * scaler_.ceiling_workers(); }
  void attach(core::Dispatcher& dispatcher);

  std::string controller_name() const override { return "autoscale"; }
  // The next time a worker comes up or the autoscaler decides.
  std::int64_t next_tick_us() const override;
  // At the clock's time: workers due come up, then a due tick decides.
  void tick(std::int64_t now_us) override;
  void record_arrival(std::int64_t t_us) { scaler_.record_arrival(t_us); }
  // After a batch on `slot` completed: a draining worker with nothing left in flight is stopped.
  void on_batch_done(int slot);

  // --variant-sets: the capacity table follows the variant now in use (its
  // library, over the same worker counts, read for the pattern served), as
  // `lull serve` does.
  void use_library(const std::vector<core::PolicyTable>& library);

  double worker_seconds(std::int64_t end_us);
  AutoscaleReport report() const { return report_; }

 private:
  void on_state(const manager::WorkerInfo& w);
  void on_drain(const std::string& id, std::function<void()> drained);
  void sample();
  void charge(std::int64_t now_us);

  core::VirtualClock& clock_;
  manager::PatternCapacity capacity_;
  manager::Autoscaler scaler_;
  manager::SimulatedWorkerPool pool_;
  std::unique_ptr<DispatcherSlots> dispatcher_slots_;  // attach()'s
  const core::Dispatcher* dispatcher_ = nullptr;       // attach()'s: the pattern it serves
  core::SlotMap slots_;
  std::map<std::string, manager::WorkerState> state_of_;
  manager::PoolCounts counts_;
  std::int64_t next_tick_us_;
  int desired_ = 0;
  int active_ = 0;  // starting + up + draining
  std::int64_t charged_us_ = 0;
  double worker_us_ = 0;
  AutoscaleReport report_;
};

}  // namespace lull::sim
