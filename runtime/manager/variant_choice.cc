// The load and the rule that pick a model variant (why: variant_choice.h).
#include "runtime/manager/variant_choice.h"

#include "runtime/manager/model_variants.h"

namespace lull::manager {

double MeasuredLoad::measure(std::int64_t now_us) {
  const std::uint64_t count = arrivals_.load(std::memory_order_relaxed);
  if (now_us > last_us_)
    forecaster_->observe(now_us, static_cast<double>(count - counted_) * 1e6 / static_cast<double>(now_us - last_us_));
  counted_ = count;
  last_us_ = now_us;
  return forecaster_->forecast(now_us, 0);
}

int VariantRule::decide(int current, double load_qps, std::int64_t now_us) {
  const int to = choose_variant(from_qps_, current, load_qps, hysteresis_);
  if (to == current || (attempted_ && now_us - last_attempt_us_ < dwell_us_)) return -1;
  attempted_ = true;
  last_attempt_us_ = now_us;
  return to;
}

}  // namespace lull::manager
