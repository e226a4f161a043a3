// Multi-window arrival envelope (why: see arrival_envelope.h).
#include "runtime/manager/arrival_envelope.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace lull::manager {

std::vector<EnvelopeWindow> parse_envelope(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("envelope '" + text + "': " + why +
                                 " (WINDOW_S:TOLERANCE,... e.g. 1:1.25,5:1.1,30:1)");
  };
  std::vector<EnvelopeWindow> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto colon = item.find(':');
    if (colon == std::string::npos) throw bad("'" + item + "' has no ':'");
    const std::string ws = item.substr(0, colon), ts = item.substr(colon + 1);
    char* e1 = nullptr;
    char* e2 = nullptr;
    const double w = std::strtod(ws.c_str(), &e1), t = std::strtod(ts.c_str(), &e2);
    if (ws.empty() || *e1 || !(w > 0 && w <= 3600)) throw bad("window '" + ws + "' is not in (0, 3600] s");
    if (ts.empty() || *e2 || !(t >= 0.5 && t <= 10)) throw bad("tolerance '" + ts + "' is not in [0.5, 10]");
    out.push_back(EnvelopeWindow{static_cast<std::int64_t>(std::llround(w * 1e6)), t});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

ArrivalEnvelope::ArrivalEnvelope(std::vector<EnvelopeWindow> windows, std::int64_t bucket_us)
    : windows_(std::move(windows)), bucket_us_(bucket_us) {
  if (bucket_us_ <= 0) throw std::invalid_argument("arrival envelope: bucket must be positive");
  for (const auto& w : windows_) {
    if (w.window_us < bucket_us_) throw std::invalid_argument("arrival envelope: a window shorter than a bucket");
    longest_us_ = std::max(longest_us_, w.window_us);
  }
}

void ArrivalEnvelope::record_arrivals(std::int64_t t_us, std::uint64_t n) {
  if (first_us_ < 0) first_us_ = t_us;
  const std::int64_t b = t_us / bucket_us_;
  if (!buckets_.empty() && buckets_.back().first == b)
    buckets_.back().second += n;
  else
    buckets_.emplace_back(b, n);
  const std::int64_t keep_from = b - longest_us_ / bucket_us_ - 1;
  while (!buckets_.empty() && buckets_.front().first < keep_from) buckets_.pop_front();
}

double ArrivalEnvelope::rate_qps(std::int64_t now_us, std::int64_t window_us) const {
  // The buckets that end at or before now, the last `window / bucket` of them.
  const std::int64_t last = now_us / bucket_us_ - 1;  // the last complete bucket
  const std::int64_t n = std::max<std::int64_t>(window_us / bucket_us_, 1);
  std::uint64_t count = 0;
  for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
    if (it->first > last) continue;
    if (it->first <= last - n) break;
    count += it->second;
  }
  return static_cast<double>(count) / (static_cast<double>(n * bucket_us_) * 1e-6);
}

EnvelopeCheck ArrivalEnvelope::check(std::int64_t now_us, double capacity_qps) const {
  EnvelopeCheck c;
  for (const auto& w : windows_) {
    if (first_us_ < 0 || now_us - first_us_ < w.window_us) continue;
    const double r = rate_qps(now_us, w.window_us);
    if (r > capacity_qps * w.tolerance) {
      if (!c.tripped || r > c.rate_qps) c = EnvelopeCheck{true, r, w.window_us};
    } else if (!c.tripped && r > c.rate_qps) {
      c.rate_qps = r;
      c.window_us = w.window_us;
    }
  }
  return c;
}

}  // namespace lull::manager
