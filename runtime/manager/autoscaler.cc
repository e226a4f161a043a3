// The autoscaler's rules (why and what: see autoscaler.h).
#include "runtime/manager/autoscaler.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "schema/count_rule.h"

namespace lull::manager {

PoolCounts pool_counts(const std::vector<WorkerInfo>& workers, const std::set<std::string>& out_of_rotation) {
  PoolCounts c{count_workers(workers, WorkerState::kUp), count_workers(workers, WorkerState::kStarting),
               count_workers(workers, WorkerState::kDraining)};
  for (const auto& w : workers)
    if (w.state == WorkerState::kUp && out_of_rotation.count(w.id)) {
      --c.up;
      ++c.out_of_rotation;
    }
  return c;
}

std::string ScaleDecision::log_line(const std::string& forecaster) const {
  const char* what = action == Action::kScaleOut ? "scale_out +" : action == Action::kScaleIn ? "scale_in -" : "hold ";
  char out[32] = "";
  if (before.out_of_rotation > 0) std::snprintf(out, sizeof out, " out_of_rotation=%d", before.out_of_rotation);
  char buf[560];
  std::snprintf(buf, sizeof buf,
                "autoscale t=%.3fs %s%d reason=%s need=%d up=%d starting=%d draining=%d%s forecast_qps=%.1f (%s) "
                "envelope_qps=%.1f (%gs window%s) capacity_up_qps=%.1f",
                static_cast<double>(t_us) * 1e-6, what, count, reason.empty() ? "none" : reason.c_str(), need,
                before.up, before.starting, before.draining, out, forecast_qps, forecaster.c_str(), envelope_qps,
                static_cast<double>(envelope_window_us) * 1e-6, envelope_tripped ? ", tripped" : "", capacity_up_qps);
  return buf;
}

Autoscaler::Autoscaler(CapacityTable capacity, AutoscaleOptions options, std::int64_t start_us)
    : capacity_(std::move(capacity)),
      options_(std::move(options)),
      forecaster_(make_forecaster(options_.forecast)),
      envelope_(options_.envelope),
      last_tick_us_(start_us) {
  if (options_.tick_us <= 0) throw std::invalid_argument("autoscale: the tick must be positive");
  if (options_.lead_us < 0) throw std::invalid_argument("autoscale: the lead time must not be negative");
  if (options_.scale_in_holdoff_us < 0) throw std::invalid_argument("autoscale: the hold-off must not be negative");
  if (options_.scale_in_interval_us < 0)
    throw std::invalid_argument("autoscale: the scale-in step interval must not be negative");
  if (!(options_.hysteresis >= 0 && options_.hysteresis <= 1))
    throw std::invalid_argument("autoscale: the hysteresis must be in [0, 1]");
  ceiling_ =
      options_.max_workers > 0 ? std::min(options_.max_workers, capacity_.max_workers()) : capacity_.max_workers();
  floor_ = std::max(options_.min_workers, capacity_.min_workers());
  if (floor_ > ceiling_)
    throw std::invalid_argument("autoscale: the floor (" + std::to_string(floor_) + " workers) is above the largest " +
                                "worker count allowed (" + std::to_string(ceiling_) + ")");
}

void Autoscaler::set_capacity(CapacityTable capacity) {
  if (capacity.worker_counts() != capacity_.worker_counts())
    throw std::invalid_argument("autoscale: a capacity table over other worker counts than the library's");
  capacity_ = std::move(capacity);
}

void Autoscaler::record_arrival(std::int64_t t_us) {
  ++since_tick_;
  envelope_.record_arrival(t_us);
  if (options_.envelope_rule) recent_.push_back(t_us);
}

std::string Autoscaler::forecaster_name() const {
  if (!options_.envelope_rule) return forecaster_->describe();
  char buf[64];
  std::snprintf(buf, sizeof buf, "envelope:%gs", static_cast<double>(options_.lead_us + kLoadEstimateWindowUs) * 1e-6);
  return buf;
}

std::vector<std::pair<double, double>> Autoscaler::recent_load_shares(std::int64_t now_us) const {
  const std::int64_t from = now_us - options_.lead_us - kLoadEstimateWindowUs;
  std::vector<std::int64_t> times(recent_.begin(), recent_.end());
  std::sort(times.begin(), times.end());  // a server's threads may record a little out of order
  const auto counted = static_cast<std::size_t>(std::upper_bound(times.begin(), times.end(), from) - times.begin());
  if (counted == times.size()) return {};
  return load_estimate_shares(times, 1, kLoadEstimateWindowUs, counted);
}

int Autoscaler::envelope_need(std::vector<std::pair<double, double>> shares, double inflate, double* mean_qps) const {
  double mean = 0;
  for (auto& [load, share] : shares) {
    load *= inflate;
    mean += load * share;
  }
  if (mean_qps) *mean_qps = mean;
  return capacity_.envelope_workers_for(shares, nullptr, ceiling_);
}

int Autoscaler::clamp(int workers) const { return std::min(std::max(workers, floor_), ceiling_); }

// The price rule searches within the ceiling (its best there may be below it).
int Autoscaler::need_for(double load_qps) const { return capacity_.workers_for(load_qps, nullptr, ceiling_); }

ScaleDecision Autoscaler::decide(std::int64_t now_us, PoolCounts counts) {
  if (now_us > last_tick_us_) {
    forecaster_->observe(now_us,
                         static_cast<double>(since_tick_) / (static_cast<double>(now_us - last_tick_us_) * 1e-6));
    since_tick_ = 0;
    last_tick_us_ = now_us;
  }
  ScaleDecision d;
  d.t_us = now_us;
  d.before = counts;
  d.forecast_qps = forecaster_->forecast(now_us, options_.lead_us);
  std::vector<std::pair<double, double>> shares;  // the envelope rule's load estimates, read once a tick
  if (options_.envelope_rule) {
    const std::int64_t keep = now_us - options_.lead_us - 2 * kLoadEstimateWindowUs;
    while (!recent_.empty() && recent_.front() <= keep) recent_.pop_front();
    shares = recent_load_shares(now_us);
  }
  d.capacity_up_qps = capacity_.capacity_qps(counts.up);
  const EnvelopeCheck env = envelope_.check(now_us, d.capacity_up_qps);
  d.envelope_tripped = env.tripped;
  d.envelope_qps = env.rate_qps;
  d.envelope_window_us = env.window_us;
  const int for_forecast =
      options_.envelope_rule ? envelope_need(shares, 1, &d.forecast_qps) : need_for(d.forecast_qps);
  const int for_envelope = env.tripped ? need_for(env.rate_qps) : 0;
  d.need = clamp(std::max(for_forecast, for_envelope));
  const int provisioned = counts.up + counts.starting;

  if (d.need > provisioned) {
    d.action = ScaleDecision::Action::kScaleOut;
    d.count = d.need - provisioned;
    d.reason = std::max(for_forecast, for_envelope) < floor_ ? "floor"
               : for_envelope > for_forecast                 ? "envelope"
                                                             : "forecast";
    last_scale_out_us_ = now_us;
    lower_since_us_ = -1;
    return d;
  }
  // Scale in: the forecast, the inflated forecast and every window's inflated
  // rate must fit fewer workers (the forecast itself counts for the price
  // objective, whose count need not grow with the load).
  const double inflate = 1 + options_.hysteresis;
  const int for_inflated =
      options_.envelope_rule ? envelope_need(shares, inflate, nullptr) : need_for(d.forecast_qps * inflate);
  const int for_lower = clamp(std::max({for_forecast, for_inflated, need_for(env.rate_qps * inflate)}));
  if (for_lower >= provisioned || env.tripped) {
    lower_since_us_ = -1;
    return d;
  }
  if (lower_since_us_ < 0) lower_since_us_ = now_us;
  const std::int64_t hold = options_.scale_in_holdoff_us;
  if (now_us - lower_since_us_ < hold || (last_scale_out_us_ >= 0 && now_us - last_scale_out_us_ < hold)) return d;
  if (last_scale_in_us_ >= 0 && now_us - last_scale_in_us_ < options_.scale_in_interval_us) return d;
  const int to = std::max({for_lower, capacity_.step_below(provisioned), floor_});
  if (to >= provisioned) return d;
  d.action = ScaleDecision::Action::kScaleIn;
  d.count = provisioned - to;
  d.reason = "forecast_lower";
  last_scale_in_us_ = now_us;  // the next step waits the step interval from here
  return d;
}

ScaleDecision Autoscaler::step(std::int64_t now_us, WorkerPool& pool, const std::set<std::string>& out_of_rotation) {
  const std::vector<WorkerInfo> workers = pool.list_workers();
  ScaleDecision d = decide(now_us, pool_counts(workers, out_of_rotation));
  if (d.action == ScaleDecision::Action::kScaleOut) {
    pool.start_workers(d.count);
  } else if (d.action == ScaleDecision::Action::kScaleIn) {
    // Starting workers first (they serve nothing yet), then the newest up.
    std::vector<std::string> victims;
    for (WorkerState s : {WorkerState::kStarting, WorkerState::kUp})
      for (auto it = workers.rbegin(); it != workers.rend() && static_cast<int>(victims.size()) < d.count; ++it)
        if (it->state == s && !out_of_rotation.count(it->id)) victims.push_back(it->id);
    for (const auto& id : victims) pool.stop_worker(id);
  }
  return d;
}

}  // namespace lull::manager
