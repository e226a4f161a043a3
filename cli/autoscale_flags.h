#pragma once
// The autoscaler's command-line options (`lull simulate --autoscale`; a
// server would take the same): the forecast and its window, the lead time,
// the provisioning delay of simulated workers, the envelope, the hold-off,
// hysteresis, floor and ceiling, and the planner's targets (violation rate,
// accuracy floor) and objective (fewest workers, or accuracy net of a price
// per worker-second) that make the capacity table.
#include <boost/program_options.hpp>
#include <cmath>
#include <string>

#include "runtime/sim/autoscaled_workers.h"

namespace lull::cli {

struct AutoscaleFlags {
  bool enabled = false;
  std::string forecast = "window_max:30";
  std::string provisioning = "fixed:5";
  double lead_s = -1;       // when not given: the provisioning delay's planning value
  bool lead_given = false;  // --autoscale-lead-s was given (any value, NaN and negatives included, is checked)
  std::string envelope = "1:1.25,5:1.1,30:1";
  double holdoff_s = 60, step_interval_s = 10, hysteresis = 0.1, tick_s = 1;
  int min_workers = 1, max_workers = 0;
  double max_violation = 0.01, min_accuracy = 0;
  std::string objective = "floor";     // floor | price
  std::string rule = "capacity";       // capacity | envelope (--autoscale-rule)
  double worker_price = std::nan("");  // --autoscale-worker-price (NaN: not given)
  std::string log;                     // file for the scale-event lines ('-': stderr)
};

void add_autoscale_options(boost::program_options::options_description& desc, AutoscaleFlags& flags);
// Checks ranges and parses specs (UsageError naming the flag); `seed` seeds
// drawn provisioning delays.
sim::SimAutoscale autoscale_config(const AutoscaleFlags& flags, std::uint64_t seed);

}  // namespace lull::cli
