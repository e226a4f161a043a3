// Model variants in virtual time (the rule and the order: switched_variants.h).
#include "runtime/sim/switched_variants.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/manager/model_variants.h"

namespace lull::sim {

SwitchedVariants::SwitchedVariants(const SimVariants& config, const runtime::VirtualClock& clock)
    : config_(config),
      clock_(clock),
      forecaster_(manager::make_forecaster(config.load)),
      next_check_us_(clock.now_us() + config.interval_us),
      last_check_us_(clock.now_us()) {
  if (!config_.enabled()) throw std::invalid_argument("--variant-sets: no variant above the full set");
  if (config_.interval_us <= 0) throw std::invalid_argument("--variant-interval-ms must be > 0");
  for (const auto& v : config_.variants) from_qps_.push_back(v.from_qps);
  const auto s = [](std::int64_t us) { return static_cast<double>(us) * 1e-6; };
  report_.load = forecaster_->describe();
  report_.hysteresis = config_.hysteresis;
  report_.dwell_s = s(config_.dwell_us);
  report_.interval_s = s(config_.interval_us);
  report_.load_delay_s = s(config_.load_delay_us);
  report_.full_models = manager::model_names(config_.variants.front().tables.at(0));
  for (const auto& v : config_.variants) {
    report_.names.push_back(v.name);
    report_.models.push_back(v.models);
  }
  report_.queries.assign(config_.variants.size(), 0);
  report_.queries_by_model.assign(config_.variants.size(), std::vector<std::uint64_t>(report_.full_models.size(), 0));
}

std::int64_t SwitchedVariants::next_time_us() const {
  return pending_ >= 0 ? std::min(ready_us_, next_check_us_) : next_check_us_;
}

const std::vector<runtime::PolicyTable>* SwitchedVariants::put_in_use() {
  current_ = pending_;
  pending_ = -1;
  loading_.t_s = static_cast<double>(clock_.now_us()) * 1e-6;
  report_.switches.push_back(loading_);
  return &config_.variants[static_cast<std::size_t>(current_)].tables;
}

const std::vector<runtime::PolicyTable>* SwitchedVariants::advance() {
  const std::int64_t now = clock_.now_us();
  if (pending_ >= 0 && now >= ready_us_) return put_in_use();  // loaded everywhere: the policy may use them
  if (now < next_check_us_) return nullptr;
  // The mean arrival rate since the last check, as `lull serve`'s variant thread measures it.
  if (now > last_check_us_)
    forecaster_->observe(now, static_cast<double>(arrivals_ - counted_) * 1e6 / static_cast<double>(now - last_check_us_));
  counted_ = arrivals_;
  last_check_us_ = now;
  next_check_us_ = now + config_.interval_us;
  if (pending_ >= 0) return nullptr;  // a switch is loading its models (serve's step blocks meanwhile)
  const double load = forecaster_->forecast(now, 0);
  const int to = manager::choose_variant(from_qps_, current_, load, config_.hysteresis);
  if (to == current_ || (attempted_ && now - last_attempt_us_ < config_.dwell_us)) return nullptr;
  attempted_ = true;
  last_attempt_us_ = now;
  const auto& in_use = config_.variants[static_cast<std::size_t>(current_)].models;
  bool loads = false;  // the new variant has a model the workers do not hold now
  for (const auto& m : config_.variants[static_cast<std::size_t>(to)].models)
    loads = loads || std::find(in_use.begin(), in_use.end(), m) == in_use.end();
  loading_ = VariantSwitchEvent{};
  loading_.decided_s = static_cast<double>(now) * 1e-6;
  loading_.load_qps = load;
  loading_.from = current_;
  loading_.to = to;
  pending_ = to;
  ready_us_ = now + (loads ? config_.load_delay_us : 0);
  return ready_us_ <= now ? put_in_use() : nullptr;
}

void SwitchedVariants::on_dispatch(const runtime::BatchRequest& batch) {
  const auto v = static_cast<std::size_t>(current_);
  report_.queries[v] += batch.queries.size();
  report_.queries_by_model[v].at(static_cast<std::size_t>(batch.model)) += batch.queries.size();
}

}  // namespace lull::sim
