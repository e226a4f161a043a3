#include "runtime/sim/sim_stats.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lull::sim {

void add(Outcomes& total, const Outcomes& part) {
  total.arrivals += part.arrivals;
  total.completed += part.completed;
  total.dropped += part.dropped;
  total.satisfied += part.satisfied;
  total.violated += part.violated;
  total.not_dispatched_at_end += part.not_dispatched_at_end;
  total.accuracy_sum += part.accuracy_sum;
}

void finish(Outcomes& o) {
  o.accuracy_per_satisfied_query = o.satisfied ? o.accuracy_sum / static_cast<double>(o.satisfied) : 0;
  o.violation_rate = o.completed ? static_cast<double>(o.violated) / static_cast<double>(o.completed) : 0;
}

SimStats::SimStats(const core::PolicyTable& table, bool timeline)
    : table_(table), timeline_on_(timeline), per_model_(table.models.size(), 0) {}

TimelineRow& SimStats::row_at(std::int64_t t_us) {
  const auto sec = static_cast<std::size_t>(std::max<std::int64_t>(0, t_us / 1'000'000));
  if (sec >= timeline_.size()) timeline_.resize(sec + 1);
  return timeline_[sec];
}

void SimStats::on_arrival(core::QueryId id, std::int64_t t_us) {
  if (id != arrival_us_.size()) throw std::logic_error("query ids must be consecutive from 0");
  arrival_us_.push_back(t_us);
  done_.push_back(0);
  if (timeline_on_) ++row_at(t_us).arrivals;
}

void SimStats::on_load(std::int64_t t_us, double estimate_qps, double grid_load_qps, double expected_violation) {
  TimelineRow& row = row_at(t_us);
  row.expected_violation = expected_violation;
  row.load_estimate_qps = estimate_qps;
  row.grid_load_qps = grid_load_qps;
}

void SimStats::on_pattern(std::int64_t t_us, const core::BurstinessEstimate& e, const ArrivalProcess& policy) {
  TimelineRow& row = row_at(t_us);
  row.estimate_ready = e.ready;
  row.gap_cv2 = e.gap_cv2;
  row.count_dispersion = e.dispersion;
  row.estimate = e.process;
  row.policy_arrivals = policy;
}

void SimStats::on_batch_done(const core::BatchResult& r, std::int64_t now_us) {
  const double acc = table_.models[r.model].accuracy;
  TimelineRow* row = timeline_on_ ? &row_at(now_us) : nullptr;
  for (core::QueryId id : r.queries) {
    mark_done(id);
    ++completed_;
    const std::int64_t latency_us = now_us - arrival_us_[id];
    const bool late = !r.ok || latency_us > table_.slo_us;
    if (late) {
      ++violated_;
    } else {
      accuracy_sum_ += acc;
      ++per_model_[r.model];
    }
    if (row) {
      ++row->completed;
      if (late)
        ++row->violated;
      else
        row->accuracy_sum += acc;
    }
  }
}

void SimStats::mark_done(core::QueryId id) {
  if (id >= arrival_us_.size() || done_[id])
    throw std::logic_error("query " + std::to_string(id) + " completed twice or never arrived");
  done_[id] = 1;
}

void SimStats::on_not_dispatched(const core::BatchResult& r) {
  for (core::QueryId id : r.queries) mark_done(id);
  not_dispatched_ += r.queries.size();
}

}  // namespace lull::sim
