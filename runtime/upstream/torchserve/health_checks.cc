#include "runtime/upstream/torchserve/health_checks.h"

#include "runtime/upstream/torchserve/torchserve_backend.h"

namespace lull::torchserve {

void HealthChecker::tick(std::int64_t now_us) {
  next_us_ = now_us + interval_us_;
  backend_.check_health();
}

std::int64_t OutlierEjector::next_tick_us() const { return backend_.next_probe_us(); }

void OutlierEjector::tick(std::int64_t now_us) { backend_.probe_ejected(now_us); }

}  // namespace lull::torchserve
