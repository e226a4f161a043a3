// Model variants in virtual time (the rule and the order: simulated_variant_switch.h).
#include "runtime/sim/simulated_variant_switch.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/manager/model_variants.h"

namespace lull::sim {

namespace {
std::vector<double> from_qps_of(const std::vector<manager::ModelVariant>& variants) {
  std::vector<double> out;
  for (const auto& v : variants) out.push_back(v.from_qps);
  return out;
}
}  // namespace

SimulatedVariantSwitch::SimulatedVariantSwitch(const SimVariants& config, const core::VirtualClock& clock,
                                               OnSwitch on_switch)
    : config_(config),
      on_switch_(std::move(on_switch)),
      load_(manager::make_forecaster(config.load), clock.now_us()),
      rule_(from_qps_of(config.variants), config.hysteresis, config.dwell_us),
      next_check_us_(clock.now_us() + config.interval_us) {
  if (!config_.enabled()) throw std::invalid_argument("--variant-sets: no variant above the full set");
  if (config_.interval_us <= 0) throw std::invalid_argument("--variant-interval-ms must be > 0");
  const auto s = [](std::int64_t us) { return static_cast<double>(us) * 1e-6; };
  report_.load = load_.forecaster().describe();
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

std::int64_t SimulatedVariantSwitch::next_tick_us() const {
  return pending_ >= 0 ? std::min(ready_us_, next_check_us_) : next_check_us_;
}

void SimulatedVariantSwitch::put_in_use(std::int64_t now_us) {
  current_ = pending_;
  pending_ = -1;
  loading_.t_s = static_cast<double>(now_us) * 1e-6;
  report_.switches.push_back(loading_);
  if (on_switch_) on_switch_(config_.variants[static_cast<std::size_t>(current_)].tables);
}

void SimulatedVariantSwitch::tick(std::int64_t now) {
  if (pending_ >= 0 && now >= ready_us_) return put_in_use(now);  // loaded everywhere: the policy may use them
  if (now < next_check_us_) return;
  // The mean arrival rate since the last check, as `lull serve`'s variant controller measures it.
  const double load = load_.measure(now);
  next_check_us_ = now + config_.interval_us;
  if (pending_ >= 0) return;  // a switch is loading its models (serve's step blocks meanwhile)
  const int to = rule_.decide(current_, load, now);
  if (to < 0) return;
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
  if (ready_us_ <= now) put_in_use(now);
}

void SimulatedVariantSwitch::on_dispatch(const core::BatchRequest& batch) {
  const auto v = static_cast<std::size_t>(current_);
  report_.queries[v] += batch.queries.size();
  report_.queries_by_model[v].at(static_cast<std::size_t>(batch.model)) += batch.queries.size();
}

}  // namespace lull::sim
