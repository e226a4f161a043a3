#pragma once
// The one rule that sizes a fleet for traffic whose rate moves, used by the
// planner (`lull plan --arrivals tracked:FILE`) and by the autoscaler
// (`--autoscale-rule envelope`): the fewest worker count whose expectation
// over the loads it must carry meets the violation target (and the accuracy
// floor). The loads are an envelope: the load estimates the runtime reads
// (per arrival, the arrivals in the trailing window per second), each with
// its share of arrivals. Each estimate is served by the policy of the lowest
// grid load at or above it, with that policy's compiled expectation; the
// count's expectation is their mixture, violation weighted by queries,
// accuracy by satisfied queries. The count is thus set by a quantile of the
// envelope (the rates its queries come at), not by its mean.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace lull {

// The runtime's load window (runtime/core/load_monitor.h).
inline constexpr std::int64_t kLoadEstimateWindowUs = 500'000;

struct GridFigures {
  double load_qps = 0;
  double accuracy = 0;   // per satisfied query
  double violation = 0;  // fraction of queries
};

// (estimate QPS, share of arrivals), ascending by estimate, over `times_us`
// (ascending) with its rates times `scale` (times divided by it). Arrivals
// before `first_counted` count only in the windows of later ones (the
// autoscaler's history reaches a window further back than its envelope).
// Throws std::invalid_argument for no counted arrivals or a bad scale.
std::vector<std::pair<double, double>> load_estimate_shares(const std::vector<std::int64_t>& times_us, double scale = 1,
                                                            std::int64_t window_us = kLoadEstimateWindowUs,
                                                            std::size_t first_counted = 0);

// The mixture of `grid` (ascending by load) over `shares`; its load_qps is
// the mean estimate. An estimate above the grid's top load is served by the
// top policy: with `beyond_top_missed` its queries count as violations
// (the library has no policy for it), else at that policy's figures.
// Throws std::invalid_argument for an empty grid.
GridFigures envelope_mixture(const std::vector<std::pair<double, double>>& shares, const std::vector<GridFigures>& grid,
                             bool beyond_top_missed = false);

inline bool meets_count_target(const GridFigures& m, double max_violation, double min_accuracy) {
  return m.violation <= max_violation && m.accuracy >= min_accuracy;
}

// The fewest count in 1..max_count for which `meets` holds, searched from
// `hint` (clamped to 1..max_count): galloping up to a count that meets, or,
// when the hint meets, walking down; then bisecting. Assumes meeting is
// monotone in the count. Returns 0 when max_count does not meet.
int fewest_count_meeting(int hint, int max_count, const std::function<bool(int)>& meets);

}  // namespace lull
