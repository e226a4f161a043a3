#pragma once
// Arrival processes for the simulator: a renewal process (Poisson, or Gamma
// inter-arrivals with a given CV^2) following a piecewise-constant rate, and
// replay of recorded timestamps. Seeded, so a run is reproducible.
#include <cstdint>
#include <random>
#include <vector>

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

struct ArrivalProcess {
  bool gamma = false;  // false: Poisson (exponential inter-arrivals)
  double cv2 = 1;      // squared coefficient of variation for Gamma
};

class RateArrivals final : public ArrivalSource {
 public:
  RateArrivals(std::vector<RateSegment> segments, ArrivalProcess process, std::uint64_t seed);
  bool next(std::int64_t* t_us) override;

 private:
  double draw_gap_s(double qps);
  std::vector<RateSegment> segments_;
  ArrivalProcess process_;
  std::mt19937_64 rng_;
  std::size_t seg_ = 0;
  double t_s_ = 0;  // time of the last arrival (or of the segment start)
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
