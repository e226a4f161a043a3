#pragma once
// Arrival processes for the simulator and the load generator (the one
// sampler of schema/arrival_process.h's processes): Poisson, evenly spaced,
// Gamma-renewal or batch (compound Poisson) arrivals following a
// piecewise-constant rate, and replay of recorded timestamps. Seeded, so a
// run is reproducible.
#include <cstdint>
#include <random>
#include <vector>

#include "schema/arrival_process.h"
#include "schema/rate_file.h"

namespace lull::sim {

class ArrivalSource {
 public:
  virtual ~ArrivalSource() = default;
  // Next arrival time; false when the trace is over.
  virtual bool next(std::int64_t* t_us) = 0;
};

// Rate `qps` from start_s (inclusive) to end_s (exclusive).
using RateSegment = lull::RateSegment;  // schema/rate_file.h

using lull::ArrivalProcess;  // schema/arrival_process.h

using lull::ArrivalStep;

class RateArrivals final : public ArrivalSource {
 public:
  RateArrivals(std::vector<RateSegment> segments, ArrivalProcess process, std::uint64_t seed);
  // The process changes at the steps' start times (schema/arrival_process.h,
  // parse_arrival_schedule): the rate segments are split there, and each
  // piece draws from its own process (a renewal restarted at the boundary).
  RateArrivals(std::vector<RateSegment> segments, const std::vector<ArrivalStep>& steps, std::uint64_t seed);
  bool next(std::int64_t* t_us) override;

 private:
  double draw_gap_s(double qps);
  int draw_burst_size();
  bool carries_past(std::size_t i) const;
  std::vector<RateSegment> segments_;
  std::vector<ArrivalProcess> processes_;  // one per segment
  ArrivalProcess process_;                 // the current segment's
  std::mt19937_64 rng_;
  std::size_t seg_ = 0;
  double t_s_ = 0;  // time of the last arrival (or of the segment start)
  bool started_ = false;
  int burst_left_ = 0;  // batch: further queries of the current burst, all at t_s_
  double carry_ = -1;   // >= 0: a gap crossing segments, what is left of it in mean gaps
};

class ReplayArrivals final : public ArrivalSource {
 public:
  explicit ReplayArrivals(std::vector<std::int64_t> times_us) : times_us_(std::move(times_us)) {}
  bool next(std::int64_t* t_us) override;

 private:
  std::vector<std::int64_t> times_us_;
  std::size_t i_ = 0;
};

}  // namespace lull::sim
