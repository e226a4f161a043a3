#pragma once
// `lull serve --variant-sets`: the variant loop as a Controller of the one
// ControlLoop (runtime/core/control_loop.h). Every interval it measures the load
// (MeasuredLoad: the arrivals counted since the last tick, through the load
// forecaster) and steps the VariantSwitcher, which decides (VariantRule) and
// switches make-before-break; after a switch the new variant's library goes
// to `on_switch` (--autoscale: the autoscaler's capacity table follows it).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/manager/variant_choice.h"
#include "runtime/manager/variant_switcher.h"

namespace lull::manager {

class VariantController final : public core::Controller {
 public:
  using OnSwitch = std::function<void(const std::vector<core::PolicyTable>&)>;
  // `switcher` and `clock` must outlive it; the first tick is one interval
  // after construction.
  VariantController(VariantSwitcher& switcher, std::unique_ptr<LoadForecaster> forecaster, std::int64_t interval_us,
                    const core::Clock& clock, OnSwitch on_switch, std::function<void(const std::string&)> log);
  // The session's arrival hook; any thread.
  void record_arrival() { load_.record_arrival(); }

  std::string controller_name() const override { return "variant"; }
  std::int64_t next_tick_us() const override { return next_us_.load(); }
  void tick(std::int64_t now_us) override;

 private:
  VariantSwitcher& switcher_;
  MeasuredLoad load_;
  std::int64_t interval_us_;
  const core::Clock& clock_;
  OnSwitch on_switch_;
  std::function<void(const std::string&)> log_;
  std::atomic<std::int64_t> next_us_;
};

}  // namespace lull::manager
