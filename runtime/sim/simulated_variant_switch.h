#pragma once
// `lull simulate --variant-sets` (usually with --autoscale): model variants
// in virtual time, a Controller of the simulator's ControlLoop, picked by the
// serving side's own rule (manager/variant_choice.h: every check interval the
// arrival rate feeds the load forecaster, --variant-load, and the rule says
// which variant the load calls for, at most one try per dwell time). A switch is
// make-before-break as `lull serve` does it (runtime/manager/
// variant_switcher.h): the new variant's models load on every worker, which
// takes the model-load delay (fixed); only then are its policies put in use
// (the caller replaces the Dispatcher's tables and the autoscaler's capacity
// table), and the models it drops are unloaded after that, so no batch is
// sent to a model not loaded. A switch that loads nothing (to a subset of
// the models in use) waits for nothing and takes effect at once, as on a
// server. Workers that come up hold the full set (a superset of every
// variant), so they need no load of their own. No unload is modelled: the
// policy has stopped using those models when they go.
//
// It also counts, per variant, the queries of every batch dispatched while
// that variant was in use, by model: the result shows that no query went to
// a model outside the variant in use.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/manager/variant_choice.h"
#include "runtime/manager/variant_switcher.h"
#include "runtime/core/policy_table.h"

namespace lull::sim {

struct SimVariants {
  // [0] the full set (the library the run starts on), then ascending by
  // from_qps, each widened over the full set's models. Fewer than two: off.
  std::vector<manager::ModelVariant> variants;
  double hysteresis = 0.1;                 // choose_variant's
  std::int64_t dwell_us = 5'000'000;       // at least this long between switches
  std::int64_t interval_us = 200'000;      // how often the load is checked
  std::string load = "current:5";          // the forecaster that estimates the load
  std::int64_t load_delay_us = 5'000'000;  // loading a variant's new models on every worker
  bool enabled() const { return variants.size() > 1; }
};

struct VariantSwitchEvent {
  double decided_s = 0;  // when the load called for it (its models began to load)
  double t_s = 0;        // when its policies were put in use
  double load_qps = 0;   // the estimate that decided it
  int from = 0, to = 0;
};

struct VariantReport {
  std::string load;
  double hysteresis = 0, dwell_s = 0, interval_s = 0, load_delay_s = 0;
  std::vector<std::string> names;                            // per variant
  std::vector<std::vector<std::string>> models;              // per variant: the models its policies use
  std::vector<std::string> full_models;                      // the full set's, in model-id order
  std::vector<VariantSwitchEvent> switches;                  // those put in use (one still loading at the end is not)
  std::vector<std::uint64_t> queries;                        // per variant: dispatched while it was in use
  std::vector<std::vector<std::uint64_t>> queries_by_model;  // [variant][full-set model id]
};

class SimulatedVariantSwitch final : public core::Controller {
 public:
  // The library to put in use (the caller hands it to the Dispatcher and the autoscaler).
  using OnSwitch = std::function<void(const std::vector<core::PolicyTable>&)>;
  // Throws std::invalid_argument for a load forecaster it cannot parse.
  SimulatedVariantSwitch(const SimVariants& config, const core::VirtualClock& clock, OnSwitch on_switch);

  std::string controller_name() const override { return "variant"; }
  // The next time a check is due or a pending switch's models are loaded.
  std::int64_t next_tick_us() const override;
  // A switch whose models are now loaded takes effect (on_switch); else a
  // due check decides (a switch that loads nothing takes effect at once).
  void tick(std::int64_t now_us) override;
  void record_arrival() { load_.record_arrival(); }
  // Every batch the backend starts: counted under the variant in use.
  void on_dispatch(const core::BatchRequest& batch);
  int current() const { return current_; }
  const VariantReport& report() const { return report_; }

 private:
  void put_in_use(std::int64_t now_us);

  SimVariants config_;
  OnSwitch on_switch_;
  manager::MeasuredLoad load_;
  manager::VariantRule rule_;
  int current_ = 0;
  int pending_ = -1;            // the variant whose models are loading
  VariantSwitchEvent loading_;  // its switch, reported once in use
  std::int64_t ready_us_ = 0;
  std::int64_t next_check_us_;
  VariantReport report_;
};

}  // namespace lull::sim
