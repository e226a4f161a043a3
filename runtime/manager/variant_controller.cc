// The serving side's variant loop (why: variant_controller.h).
#include "runtime/manager/variant_controller.h"

#include <exception>

namespace lull::manager {

VariantController::VariantController(VariantSwitcher& switcher, std::unique_ptr<LoadForecaster> forecaster,
                                     std::int64_t interval_us, const core::Clock& clock, OnSwitch on_switch,
                                     std::function<void(const std::string&)> log)
    : switcher_(switcher),
      load_(std::move(forecaster), clock.now_us()),
      interval_us_(interval_us),
      clock_(clock),
      on_switch_(std::move(on_switch)),
      log_(std::move(log)),
      next_us_(clock.now_us() + interval_us) {}

void VariantController::tick(std::int64_t now_us) {
  if (switcher_.step(load_.measure(now_us), now_us) && on_switch_) {
    try {
      on_switch_(switcher_.variant(switcher_.current()).tables);
    } catch (const std::exception& e) {  // checked at start; never ends serving
      if (log_) log_(std::string("variant: ") + e.what());
    }
  }
  // One interval after this tick ends (a switch may have taken seconds).
  next_us_ = clock_.now_us() + interval_us_;
}

}  // namespace lull::manager
