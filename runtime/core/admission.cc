#include "runtime/core/admission.h"

#include <algorithm>
#include <stdexcept>

namespace lull::core {

AdmissionVerdict admit_query(const AdmissionInput& in, const std::vector<double>& lat) {
  if (lat.empty()) throw std::invalid_argument("admission: the fastest model has no latency table");
  const std::int64_t n = static_cast<std::int64_t>(in.queued_ahead) + 1;
  const std::int64_t b = static_cast<std::int64_t>(lat.size());
  const std::int64_t rest = n % b;
  const double drain_us =
      static_cast<double>(n / b) * lat.back() + (rest ? lat[static_cast<std::size_t>(rest - 1)] : 0.0);
  AdmissionVerdict v;
  v.earliest_completion_us =
      in.now_us + std::max<std::int64_t>(0, in.busy_remaining_us) + static_cast<std::int64_t>(drain_us);
  v.admit = v.earliest_completion_us <= in.deadline_us;
  return v;
}

int retry_after_seconds(const AdmissionInput& in, const AdmissionVerdict& v) {
  const std::int64_t wait_us = v.earliest_completion_us - in.now_us;
  return static_cast<int>(std::max<std::int64_t>(1, (wait_us + 999'999) / 1'000'000));
}

}  // namespace lull::core
