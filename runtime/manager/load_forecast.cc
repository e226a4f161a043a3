// Load forecasters for the autoscaler (why: see load_forecast.h).
#include "runtime/manager/load_forecast.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace lull::manager {
namespace {

std::string seconds_text(std::int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(us) * 1e-6);
  return buf;
}

}  // namespace

void ObservationWindow::add(std::int64_t t_us, double qps) {
  points_.emplace_back(t_us, qps);
  while (!points_.empty() && points_.front().first <= t_us - window_us_) points_.pop_front();
}

double WindowForecaster::forecast(std::int64_t now_us, std::int64_t lead_us) const {
  const auto& pts = window_.points();
  if (pts.empty()) return 0;
  if (kind_ == Kind::kTrend) return trend(now_us, lead_us);
  double m = 0, sum = 0;
  for (const auto& p : pts) {
    m = std::max(m, p.second);
    sum += p.second;
  }
  return kind_ == Kind::kMax ? m : sum / static_cast<double>(pts.size());
}

std::string WindowForecaster::describe() const {
  const char* name = kind_ == Kind::kMax ? "window_max:" : kind_ == Kind::kTrend ? "trend:" : "current:";
  return name + seconds_text(window_.window_us());
}

void EwmaForecaster::observe(std::int64_t t_us, double qps) {
  if (!have_) {
    level_ = qps;
    have_ = true;
  } else {
    // Weight of the new tick by the time it covers: ticks of any length
    // give the same time constant.
    const double a =
        1 - std::exp(-static_cast<double>(std::max<std::int64_t>(t_us - last_us_, 0)) / static_cast<double>(tau_us_));
    level_ += a * (qps - level_);
  }
  last_us_ = t_us;
}
double EwmaForecaster::forecast(std::int64_t, std::int64_t) const { return have_ ? level_ : 0; }
std::string EwmaForecaster::describe() const { return "ewma:" + seconds_text(tau_us_); }

double WindowForecaster::trend(std::int64_t now_us, std::int64_t lead_us) const {
  const auto& pts = window_.points();
  if (pts.size() == 1) return pts.front().second;
  // Least squares over (t, qps), t in seconds relative to now for conditioning.
  double st = 0, sy = 0, stt = 0, sty = 0;
  const double n = static_cast<double>(pts.size());
  for (const auto& p : pts) {
    const double t = static_cast<double>(p.first - now_us) * 1e-6;
    st += t;
    sy += p.second;
    stt += t * t;
    sty += t * p.second;
  }
  const double den = n * stt - st * st;
  const double slope = den > 0 ? (n * sty - st * sy) / den : 0;
  const double at_now = (sy - slope * st) / n;
  const double at_lead = at_now + slope * static_cast<double>(lead_us) * 1e-6;
  return std::max({at_now, at_lead, 0.0});
}

std::unique_ptr<LoadForecaster> make_forecaster(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("forecast '" + spec + "': " + why +
                                 " (window_max:S, ewma:S, trend:S or current:S; S the window in seconds)");
  };
  if (colon == std::string::npos) throw bad("no window");
  const std::string w = spec.substr(colon + 1);
  char* end = nullptr;
  const double s = std::strtod(w.c_str(), &end);
  if (w.empty() || *end != '\0' || !std::isfinite(s) || !(s > 0) || s > 86400)
    throw bad("window '" + w + "' is not a number of seconds in (0, 86400]");
  const auto us = static_cast<std::int64_t>(std::llround(s * 1e6));
  if (kind == "window_max") return std::make_unique<WindowForecaster>(WindowForecaster::Kind::kMax, us);
  if (kind == "ewma") return std::make_unique<EwmaForecaster>(us);
  if (kind == "trend") return std::make_unique<WindowForecaster>(WindowForecaster::Kind::kTrend, us);
  if (kind == "current") return std::make_unique<WindowForecaster>(WindowForecaster::Kind::kMean, us);
  throw bad("unknown kind '" + kind + "'");
}

}  // namespace lull::manager
