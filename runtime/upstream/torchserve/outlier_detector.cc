// Outlier ejection policy (outlier_detector.h): counting, backoff, return gate.
#include "runtime/upstream/torchserve/outlier_detector.h"

#include <stdexcept>
#include <string>

namespace lull::torchserve {

OutlierDetector::OutlierDetector(OutlierOptions options) : options_(options) {
  if (options_.eject_after_failures < 1)
    throw std::invalid_argument(
        "outlier ejection: eject_after_failures (--eject-after-failures) must be at least 1, got " +
        std::to_string(options_.eject_after_failures));
  if (options_.base_ms < 1)
    throw std::invalid_argument("outlier ejection: base_ms (--eject-base-ms) must be at least 1, got " +
                                std::to_string(options_.base_ms));
  if (options_.max_ms < options_.base_ms)
    throw std::invalid_argument("outlier ejection: max_ms (--eject-max-ms) " + std::to_string(options_.max_ms) +
                                " is below base_ms (--eject-base-ms) " + std::to_string(options_.base_ms));
}

void OutlierDetector::record_success() { failures_ = 0; }

bool OutlierDetector::record_failure(Failure) {
  ++failures_;
  return should_eject();
}

bool OutlierDetector::should_eject() const { return !ejected_ && failures_ >= options_.eject_after_failures; }

std::int64_t OutlierDetector::eject(std::int64_t now_us) {
  if (ever_returned_ && now_us - returned_us_ >= options_.good_period_ms * 1000) ejections_ = 0;
  std::int64_t ms = options_.base_ms;
  for (int k = 0; k < ejections_ && ms < options_.max_ms; ++k) ms *= 2;
  if (ms > options_.max_ms) ms = options_.max_ms;
  ++ejections_;
  ejected_ = true;
  failures_ = 0;
  until_us_ = now_us + ms * 1000;
  return ms;
}

bool OutlierDetector::may_return(std::int64_t now_us) const { return !ejected_ || now_us >= until_us_; }

void OutlierDetector::returned(std::int64_t now_us) {
  ejected_ = false;
  returned_us_ = now_us;
  ever_returned_ = true;
}

}  // namespace lull::torchserve
