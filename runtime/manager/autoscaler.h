#pragma once
// The autoscaler: decides, once per tick, how many workers to add or remove,
// and applies the decision to a WorkerPool. Pure and clock-injected (time is
// an argument), so the same code runs over virtual time in `lull simulate
// --autoscale` and over wall time in a server. The rules (docs/operators-guide.md):
//   need       the fewest compiled workers whose capacity (CapacityTable: the
//              library's own expectations against the violation target and
//              the accuracy floor) covers the forecast over the lead time;
//              with the price objective, the count among those covering it
//              that maximizes accuracy net of the workers' price;
//              with the envelope rule (options.envelope_rule): the planner's
//              rule over the load estimates of the last reaction time;
//   scale out  at once, by as many workers as `need` exceeds up + starting
//              (reason "forecast", or "floor" below the floor);
//   safety net the arrival envelope (several windows) against the capacity
//              of the workers up: a trip scales out at once to what the
//              observed rate needs (reason "envelope"), whatever the forecast;
//   scale in   only when the forecast inflated by the hysteresis (and every
//              envelope window's rate so inflated) fits fewer workers, that
//              has held for the hold-off, and the hold-off has passed since
//              the last scale-out; then one step: down to the next compiled
//              worker count (never below it, the need or the floor), starting
//              workers first, then the newest up (reason "forecast_lower");
//              the next step no sooner than the step interval after it.
//   out of     a worker up in its pool that the serving layer took out of
//   rotation   rotation (outlier ejection, a failed health check) is not
//              counted up: its capacity is not there, so the forecast rule
//              replaces it if the load needs it. It is not stopped for that
//              (ejection is temporary; a worker that dies is failed by its
//              pool), nor chosen by a scale-in (it is not counted).
// Every decision that acts is one log line with its reason and numbers.
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/manager/arrival_envelope.h"
#include "runtime/manager/capacity_table.h"
#include "runtime/manager/load_forecast.h"
#include "runtime/manager/worker_pool.h"

namespace lull::manager {

struct AutoscaleOptions {
  std::string forecast = "window_max:30";  // make_forecaster's spec
  std::int64_t lead_us = 5'000'000;        // the provisioning lead time the forecast covers
  std::int64_t tick_us = 1'000'000;        // how often decide() runs
  std::vector<EnvelopeWindow> envelope = {{1'000'000, 1.25}, {5'000'000, 1.1}, {30'000'000, 1.0}};
  std::int64_t scale_in_holdoff_us = 60'000'000;
  std::int64_t scale_in_interval_us = 10'000'000;  // between two scale-in steps
  double hysteresis = 0.1;                         // scale in only if the load * (1 + hysteresis) fits the lower count
  int min_workers = 1;                             // the floor (raised to the library's smallest worker count)
  int max_workers = 0;                             // 0: the library's largest worker count
  // --autoscale-rule envelope: `need` by the planner's rule for tracked
  // traffic (schema/count_rule.h) over the load estimates (per arrival, its
  // trailing 500 ms window's rate) of the last reaction time, lead + the load
  // window, instead of the capacity table's count for the forecast.
  bool envelope_rule = false;
};

struct PoolCounts {
  int up = 0, starting = 0, draining = 0;
  int out_of_rotation = 0;  // up in the pool but out of the serving rotation: not in `up`
};

struct ScaleDecision {
  enum class Action { kNone, kScaleOut, kScaleIn };
  std::int64_t t_us = 0;
  Action action = Action::kNone;
  int count = 0;       // workers to start (scale out) or stop (scale in)
  std::string reason;  // "forecast", "envelope", "floor", "forecast_lower"; "" when none
  int need = 0;        // workers the forecast (or the envelope's trip) needs
  double forecast_qps = 0;
  double envelope_qps = 0;  // the tripping (else the highest) window's rate
  std::int64_t envelope_window_us = 0;
  bool envelope_tripped = false;
  double capacity_up_qps = 0;  // capacity of the workers up
  PoolCounts before;
  // One line: "autoscale t=12.000s scale_out +3 reason=forecast need=70 ...".
  std::string log_line(const std::string& forecaster) const;
};

class Autoscaler {
 public:
  // Throws std::invalid_argument for options out of range (naming them).
  // start_us: when it starts counting arrivals (the first tick's rate covers
  // (start_us, first tick]).
  Autoscaler(CapacityTable capacity, AutoscaleOptions options, std::int64_t start_us);

  void record_arrival(std::int64_t t_us);
  // The decision at now_us (call once per tick, time ascending); updates
  // the forecaster with the rate since the previous call.
  ScaleDecision decide(std::int64_t now_us, PoolCounts counts);
  // decide() on the pool's counts, then starts or stops its workers.
  // `out_of_rotation`: ids of workers up in the pool that the serving layer
  // does not route to now (counted apart, never stopped by a scale-in).
  ScaleDecision step(std::int64_t now_us, WorkerPool& pool, const std::set<std::string>& out_of_rotation = {});

  const CapacityTable& capacity() const { return capacity_; }
  // Another library's capacities from the next decision on (model variants:
  // the variant in use decides what each worker count carries). Throws
  // std::invalid_argument when its worker counts differ from the current
  // table's (the floor and ceiling stay as they are).
  void set_capacity(CapacityTable capacity);
  const AutoscaleOptions& options() const { return options_; }
  std::string forecaster_name() const;
  int floor_workers() const { return floor_; }
  int ceiling_workers() const { return ceiling_; }

 private:
  int clamp(int workers) const;
  int need_for(double load_qps) const;  // the capacity table's count, searched up to the ceiling
  // The load estimates (share of arrivals) of the arrivals in the last lead + load window.
  std::vector<std::pair<double, double>> recent_load_shares(std::int64_t now_us) const;
  // The envelope rule's count for `shares`, their loads times `inflate` (their mean in *mean_qps).
  int envelope_need(std::vector<std::pair<double, double>> shares, double inflate, double* mean_qps) const;

  CapacityTable capacity_;
  AutoscaleOptions options_;
  std::unique_ptr<LoadForecaster> forecaster_;
  ArrivalEnvelope envelope_;
  int floor_ = 1, ceiling_ = 1;
  std::uint64_t since_tick_ = 0;
  std::deque<std::int64_t> recent_;  // arrivals of the last reaction time and one load window (envelope rule)
  std::int64_t last_tick_us_;
  std::int64_t last_scale_out_us_ = -1;
  std::int64_t last_scale_in_us_ = -1;
  std::int64_t lower_since_us_ = -1;  // since when fewer workers would do (-1: not now)
};

// The workers by state; those up whose ids are in `out_of_rotation` count
// as out_of_rotation, not up.
PoolCounts pool_counts(const std::vector<WorkerInfo>& workers, const std::set<std::string>& out_of_rotation = {});

}  // namespace lull::manager
