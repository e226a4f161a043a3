#pragma once
// The autoscaler's forecast of the load over the provisioning lead time: a
// worker asked for now serves only after the lead, so the decision must be
// sized for the load then, not now. Pluggable, chosen by option:
//   window_max:W   the highest rate seen in the last W s (MArk's predictor:
//                  cheap, never under-provisions a repeat of a recent peak)
//   ewma:W         exponentially weighted mean with time constant W s
//   trend:W        least-squares line over the last W s, its highest value
//                  over [now, now + lead] (catches ramps before they peak)
//   current:W      the mean rate of the last W s, no look-ahead (the
//                  reactive-only variant)
// Observations are per-tick rates (queries in the tick / its length); time is
// passed in, so every forecaster is pure and deterministic.
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>

namespace lull::manager {

class LoadForecaster {
 public:
  virtual ~LoadForecaster() = default;
  // The mean rate over the tick that ended at t_us (ticks in time order).
  virtual void observe(std::int64_t t_us, double qps) = 0;
  // The rate to provision for over (now, now + lead_us]; 0 before any observation.
  virtual double forecast(std::int64_t now_us, std::int64_t lead_us) const = 0;
  // "window_max:30" and the like, for logs and results.
  virtual std::string describe() const = 0;
};

// Parses "KIND:WINDOW_S" (KIND as above; WINDOW_S > 0). Throws
// std::invalid_argument naming the text.
std::unique_ptr<LoadForecaster> make_forecaster(const std::string& spec);

// The observations of the last `window_us` (shared by the windowed forecasters).
class ObservationWindow {
 public:
  explicit ObservationWindow(std::int64_t window_us) : window_us_(window_us) {}
  void add(std::int64_t t_us, double qps);
  const std::deque<std::pair<std::int64_t, double>>& points() const { return points_; }
  std::int64_t window_us() const { return window_us_; }

 private:
  std::int64_t window_us_;
  std::deque<std::pair<std::int64_t, double>> points_;
};

// window_max, trend and current: a statistic of the observations in the window.
class WindowForecaster final : public LoadForecaster {
 public:
  enum class Kind { kMax, kTrend, kMean };
  WindowForecaster(Kind kind, std::int64_t window_us) : kind_(kind), window_(window_us) {}
  void observe(std::int64_t t_us, double qps) override { window_.add(t_us, qps); }
  double forecast(std::int64_t now_us, std::int64_t lead_us) const override;
  std::string describe() const override;

 private:
  double trend(std::int64_t now_us, std::int64_t lead_us) const;
  Kind kind_;
  ObservationWindow window_;
};

class EwmaForecaster final : public LoadForecaster {
 public:
  explicit EwmaForecaster(std::int64_t time_constant_us) : tau_us_(time_constant_us) {}
  void observe(std::int64_t t_us, double qps) override;
  double forecast(std::int64_t now_us, std::int64_t lead_us) const override;
  std::string describe() const override;

 private:
  std::int64_t tau_us_;
  bool have_ = false;
  std::int64_t last_us_ = 0;
  double level_ = 0;
};

}  // namespace lull::manager
