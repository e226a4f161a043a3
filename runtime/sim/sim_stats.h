#pragma once
// What a simulation measured: per-query outcomes (satisfied or late), the
// accuracy of satisfied queries, queries left undispatched at a reference
// end of run, and an optional per-second timeline.
#include <cstdint>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/burstiness_estimator.h"
#include "runtime/core/policy_table.h"

namespace lull::sim {

// A run's query outcomes. The simulator fills one per run; a sharded run and
// a fleet add up their parts' (add), then take the rates (finish).
struct Outcomes {
  std::uint64_t arrivals = 0, completed = 0, dropped = 0, satisfied = 0, violated = 0;
  std::uint64_t not_dispatched_at_end = 0;  // with a dispatch end only
  double accuracy_sum = 0;                  // the models' accuracies over satisfied queries
  double accuracy_per_satisfied_query = 0;  // finish(): accuracy_sum / satisfied
  double violation_rate = 0;                // finish(): violated / completed
};

// Adds `part`'s counts and accuracy sum to `total`; its rates are finish()'s.
void add(Outcomes& total, const Outcomes& part);
// Sets the rates from the counts (0 over no queries).
void finish(Outcomes& o);

struct TimelineRow {
  std::uint64_t arrivals = 0;
  std::uint64_t completed = 0;
  std::uint64_t violated = 0;
  double accuracy_sum = 0;        // over satisfied queries completing in this second
  double load_estimate_qps = 0;   // at the last arrival of this second
  double grid_load_qps = 0;       // compiled load in use at that arrival
  double expected_violation = 0;  // what the policy in use at that arrival expects
  // lull's scheduler: the burstiness estimate at that arrival (not ready:
  // `estimate_ready` false) and the arrival process of the policy in use.
  bool estimate_ready = false;
  double gap_cv2 = 0, count_dispersion = 0;
  ArrivalProcess estimate, policy_arrivals;
};

class SimStats {
 public:
  SimStats(const core::PolicyTable& table, bool timeline);
  void on_arrival(core::QueryId id, std::int64_t t_us);
  // Timeline only: the load estimate and compiled load in use after an arrival.
  void on_load(std::int64_t t_us, double estimate_qps, double grid_load_qps, double expected_violation);
  // Timeline only: the burstiness estimate and the policy's arrival process.
  void on_pattern(std::int64_t t_us, const core::BurstinessEstimate& e, const ArrivalProcess& policy_arrivals);
  void on_batch_done(const core::BatchResult& r, std::int64_t now_us);
  // The batch's queries were still queued at the run's end (mdp-spec 8): they
  // are neither served nor violated, only counted.
  void on_not_dispatched(const core::BatchResult& r);

  std::uint64_t arrivals() const { return arrival_us_.size(); }
  std::uint64_t completed() const { return completed_; }
  std::uint64_t not_dispatched() const { return not_dispatched_; }
  std::uint64_t satisfied() const { return completed_ - violated_; }
  std::uint64_t violated() const { return violated_; }
  double accuracy_sum() const { return accuracy_sum_; }
  const std::vector<std::uint64_t>& per_model() const { return per_model_; }
  const std::vector<TimelineRow>& timeline() const { return timeline_; }

 private:
  TimelineRow& row_at(std::int64_t t_us);
  const core::PolicyTable& table_;
  bool timeline_on_;
  std::vector<std::int64_t> arrival_us_;  // by query id (ids are 0, 1, 2, ...)
  std::vector<std::uint8_t> done_;        // guards against double completion
  void mark_done(core::QueryId id);
  std::uint64_t completed_ = 0, violated_ = 0, not_dispatched_ = 0;
  double accuracy_sum_ = 0;
  std::vector<std::uint64_t> per_model_;
  std::vector<TimelineRow> timeline_;
};

}  // namespace lull::sim
