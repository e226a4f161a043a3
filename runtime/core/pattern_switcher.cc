#include "runtime/core/pattern_switcher.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lull::core {
namespace {

// A power of two at or above b (at least 2: beyond the library is bursty).
double round_up_pow2(double b) { return std::max(2.0, std::exp2(std::ceil(std::log2(b)))); }

}  // namespace

PatternSwitcher::PatternSwitcher(bool compile_beyond, double tolerance)
    : compile_beyond_(compile_beyond), tolerance_(tolerance) {
  if (!(tolerance >= 0 && tolerance <= 10)) throw std::invalid_argument("pattern tolerance must be in [0, 10]");
}

const ArrivalProcess& PatternSwitcher::update(const BurstinessEstimate& e,
                                              const std::vector<ArrivalProcess>& compiled) {
  if (compiled.empty()) throw std::invalid_argument("pattern switcher needs at least one compiled pattern");
  if (!started_) {
    std::size_t least = 0;
    for (std::size_t i = 1; i < compiled.size(); ++i)
      if (compiled[i].burstiness() < compiled[least].burstiness()) least = i;
    current_ = compiled[least];
    started_ = true;
  }
  if (!e.ready) return current_;
  const double b = e.process.burstiness(), cur = current_.burstiness();
  double top = 0;
  for (const auto& p : compiled) top = std::max(top, p.burstiness());
  const bool beyond = b > top * (1 + tolerance_);
  if (beyond && !beyond_) ++beyond_events_;
  beyond_ = beyond;
  ArrivalProcess next = current_;
  if (b > cur * (1 + tolerance_)) {  // up
    if (beyond && compile_beyond_) {
      next = e.process;
      (next.kind == ArrivalProcess::Kind::kBatch ? next.dispersion : next.cv2) = round_up_pow2(b / (1 + tolerance_));
    } else {
      next = compiled[covering_pattern(compiled, e.process, tolerance_)];
    }
  } else {  // down, only once clearly covered by the lower pattern
    const ArrivalProcess& lower = compiled[covering_pattern(compiled, e.process, tolerance_)];
    if (lower.burstiness() < cur && b <= lower.burstiness()) next = lower;
  }
  if (!(next == current_)) {
    current_ = next;
    ++switches_;
  }
  return current_;
}

}  // namespace lull::core
