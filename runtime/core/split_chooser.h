#pragma once
// Which of a class's splits (FleetClassTables::splits, by class load) the
// front end uses now (docs/operators-guide.md "Serving"). Adjacent splits can give a
// kind very different weights, so the choice must not follow the noise of
// the load estimate: a 500 ms count at 18 qps has about 9 arrivals (+-33%),
// which flips between splits several loads apart from query to query. So:
// - the load is measured over the last `arrivals` arrivals (default 200:
//   +-7%), in a window of at least 0.5 s (all of its arrivals) and at most
//   10 s. A fall (the safe direction: each kind then gets less than its
//   split was planned for) shows as those arrivals are replaced; a rise
//   soon: when the last 0.5 s or 2 s hold far more arrivals than the estimate
//   predicts (4 standard deviations of a Poisson count, and 2 more), the
//   arrivals before them are forgotten;
// - hysteresis: the split at index i (covering class loads (L[i-1], L[i]])
//   stays while the estimate is within (L[i-1] x (1 - h), L[i] x (1 + h)].
#include <cstdint>
#include <deque>
#include <vector>

namespace lull::core {

struct SplitChooserOptions {
  int arrivals = 200;                       // the estimate's sample
  std::int64_t min_window_us = 500'000;     // at least this long (mdp-spec.md 7's window)
  std::int64_t max_window_us = 10'000'000;  // at most this long (how stale a low load's estimate gets)
  std::int64_t rise_window_us = 2'000'000;  // the count that detects a rise
  double hysteresis = 0.1;                  // fraction of the band's bounds
};

class SplitChooser {
 public:
  // `split_loads`: the class's split loads, strictly ascending, not empty.
  explicit SplitChooser(std::vector<double> split_loads, SplitChooserOptions options = {});
  // Records an arrival at now_us (non-decreasing) and returns the split in use.
  int on_arrival(std::int64_t now_us);
  int current() const { return current_; }
  double estimate_qps() const { return estimate_qps_; }

 private:
  double estimate(std::int64_t now_us);

  std::vector<double> loads_;
  SplitChooserOptions options_;
  std::deque<std::int64_t> recent_us_;  // within the last min_window_us
  std::deque<std::int64_t> older_us_;   // before it, oldest first
  int current_ = -1;                    // none before the first arrival
  double estimate_qps_ = 0;
};

}  // namespace lull::core
