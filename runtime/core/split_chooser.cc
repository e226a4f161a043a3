#include "runtime/core/split_chooser.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lull::core {

SplitChooser::SplitChooser(std::vector<double> split_loads, SplitChooserOptions options)
    : loads_(std::move(split_loads)), options_(options) {
  if (loads_.empty()) throw std::invalid_argument("split chooser: a class needs at least one split");
  for (std::size_t i = 1; i < loads_.size(); ++i)
    if (!(loads_[i] > loads_[i - 1])) throw std::invalid_argument("split chooser: split loads must ascend strictly");
  if (options_.arrivals < 2 || options_.min_window_us <= 0 || options_.max_window_us < options_.min_window_us ||
      options_.rise_window_us < options_.min_window_us || options_.hysteresis < 0)
    throw std::invalid_argument("split chooser: bad options");
}

double SplitChooser::estimate(std::int64_t now_us) {
  recent_us_.push_back(now_us);
  while (recent_us_.front() <= now_us - options_.min_window_us) {
    older_us_.push_back(recent_us_.front());
    recent_us_.pop_front();
  }
  const auto keep = static_cast<std::size_t>(options_.arrivals);
  while (!older_us_.empty() &&
         (older_us_.front() <= now_us - options_.max_window_us || older_us_.size() + recent_us_.size() > keep))
    older_us_.pop_front();
  const double recent_qps = static_cast<double>(recent_us_.size()) * 1e6 / static_cast<double>(options_.min_window_us);
  if (older_us_.empty()) return recent_qps;
  // The window reaches back to the oldest arrival kept, which it does not
  // count: (n - 1) / span estimates a Poisson rate without bias.
  const double span_us = static_cast<double>(now_us - older_us_.front());
  const double qps = static_cast<double>(older_us_.size() + recent_us_.size() - 1) * 1e6 / span_us;
  // A rise shows in the last 0.5 s (a steep one) or the last 2 s (a moderate one).
  for (const std::int64_t window_us : {options_.min_window_us, options_.rise_window_us}) {
    const auto since = std::upper_bound(older_us_.begin(), older_us_.end(), now_us - window_us);
    const auto count = static_cast<std::size_t>(older_us_.end() - since) + recent_us_.size();
    const double predicted = qps * static_cast<double>(window_us) / 1e6;
    if (static_cast<double>(count) < predicted + 4 * std::sqrt(predicted) + 2) continue;
    older_us_.erase(older_us_.begin(), since);  // the arrivals before no longer say what the load is
    if (older_us_.empty()) return recent_qps;
    return static_cast<double>(older_us_.size() + recent_us_.size() - 1) * 1e6 /
           static_cast<double>(now_us - older_us_.front());
  }
  return qps;
}

int SplitChooser::on_arrival(std::int64_t now_us) {
  estimate_qps_ = estimate(now_us);
  const auto at = [&](double load) {
    const auto it = std::lower_bound(loads_.begin(), loads_.end(), load);
    return it == loads_.end() ? static_cast<int>(loads_.size()) - 1 : static_cast<int>(it - loads_.begin());
  };
  if (current_ < 0) return current_ = at(estimate_qps_);
  const double h = options_.hysteresis;
  const double low = current_ == 0 ? 0 : loads_[static_cast<std::size_t>(current_ - 1)] * (1 - h);
  const double high = loads_[static_cast<std::size_t>(current_)] * (1 + h);
  const bool top = current_ == static_cast<int>(loads_.size()) - 1;
  if (estimate_qps_ <= low || (estimate_qps_ > high && !top)) current_ = at(estimate_qps_);
  return current_;
}

}  // namespace lull::core
