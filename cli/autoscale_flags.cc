// Autoscaler flags to the simulator's configuration (why: see autoscale_flags.h).
#include "cli/autoscale_flags.h"

#include <cmath>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "runtime/manager/provisioning_delay.h"
#include "schema/input_limits.h"
#include "schema/number_text.h"

namespace lull::cli {
namespace po = boost::program_options;

void add_autoscale_options(po::options_description& desc, AutoscaleFlags& f) {
  // clang-format off
  desc.add_options()
      ("autoscale", po::bool_switch(&f.enabled), "let the autoscaler choose the workers (from --workers at the start), "
       "over the policy library's worker counts")
      ("autoscale-forecast", po::value(&f.forecast)->default_value(f.forecast),
       "load forecast over the lead time: window_max:S | ewma:S | trend:S | current:S (S: window in seconds)")
      ("provisioning-delay", po::value(&f.provisioning)->default_value(f.provisioning),
       "time from asking for a worker to its serving: fixed:S | uniform:MIN_S:MAX_S | exp:MIN_S:MEAN_EXTRA_S")
      ("autoscale-lead-s", po::value(&f.lead_s)->notifier([&f](double) { f.lead_given = true; }), "lead time the forecast covers (default: the provisioning delay; "
       "its maximum, or minimum + mean, when drawn)")
      ("autoscale-envelope", po::value(&f.envelope)->default_value(f.envelope),
       "safety net: WINDOW_S:TOLERANCE,...; a window whose rate passes the up workers' capacity x tolerance scales out at once")
      ("autoscale-holdoff-s", po::value(&f.holdoff_s)->default_value(f.holdoff_s),
       "scale in only after fewer workers would have done for this long, and this long after the last scale-out")
      ("autoscale-step-interval-s", po::value(&f.step_interval_s)->default_value(f.step_interval_s),
       "time between two scale-in steps (each one step of the library's worker counts)")
      ("autoscale-hysteresis", po::value(&f.hysteresis)->default_value(f.hysteresis),
       "scale in only if the load x (1 + this) fits fewer workers")
      ("autoscale-tick-s", po::value(&f.tick_s)->default_value(f.tick_s), "how often the autoscaler decides")
      ("min-workers", po::value(&f.min_workers)->default_value(f.min_workers), "the autoscaler's floor")
      ("max-workers", po::value(&f.max_workers)->default_value(f.max_workers), "its ceiling (0: the library's largest)")
      ("max-violation", po::value(&f.max_violation)->default_value(f.max_violation),
       "target expected violation rate: a worker count's capacity is the highest load its policies meet it at")
      ("min-accuracy", po::value(&f.min_accuracy)->default_value(f.min_accuracy),
       "accuracy floor (fraction): loads whose policy expects less count as beyond capacity (0: none)")
      ("autoscale-objective", po::value(&f.objective)->default_value(f.objective),
       "how many workers for a load: floor (the fewest meeting --max-violation and --min-accuracy) | price (among "
       "those, the most accuracy net of --autoscale-worker-price)")
      ("autoscale-worker-price", po::value(&f.worker_price),
       "with --autoscale-objective price: accuracy points (a query at 78% earns 78) a worker must add per second to "
       "be worth running")
      ("autoscale-rule", po::value(&f.rule)->default_value(f.rule),
       "what sets the workers needed: capacity (the table's count for the forecast) | envelope (the planner's rule for "
       "tracked traffic over the load estimates of the last lead time + 0.5 s)")
      ("autoscale-log", po::value(&f.log), "write every scale event as one line to this file ('-': stderr)");
  // clang-format on
}

sim::SimAutoscale autoscale_config(const AutoscaleFlags& f, std::uint64_t seed) {
  sim::SimAutoscale c;
  c.enabled = f.enabled;
  if (!f.enabled) return c;
  check_positive_range("--autoscale-tick-s", f.tick_s, 3600);
  check_range("--autoscale-holdoff-s", f.holdoff_s, 0, limits::kMaxTraceSeconds);
  check_range("--autoscale-step-interval-s", f.step_interval_s, 0, limits::kMaxTraceSeconds);
  check_range("--autoscale-hysteresis", f.hysteresis, 0, 1);
  check_range("--min-workers", f.min_workers, 1, limits::kMaxWorkers);
  check_range("--max-workers", f.max_workers, 0, limits::kMaxWorkers);
  check_range("--min-accuracy", f.min_accuracy, 0, 0.999999);
  if (!(f.max_violation > 0 && f.max_violation < 1))
    throw UsageError("--max-violation: must be in (0, 1) (got " + number_text(f.max_violation) + ")");
  manager::CapacityObjective objective = manager::CapacityObjective::kFloor;
  if (f.objective == "price") {
    if (std::isnan(f.worker_price)) throw UsageError("--autoscale-objective price: needs --autoscale-worker-price");
    check_range("--autoscale-worker-price", f.worker_price, 0, 1e9);
    objective = manager::CapacityObjective::kPrice;
  } else if (f.objective != "floor") {
    throw UsageError("--autoscale-objective: expected floor or price (got '" + f.objective + "')");
  } else if (!std::isnan(f.worker_price)) {
    throw UsageError("--autoscale-worker-price: only with --autoscale-objective price");
  }
  if (f.rule != "capacity" && f.rule != "envelope")
    throw UsageError("--autoscale-rule: expected capacity or envelope (got '" + f.rule + "')");
  if (f.rule == "envelope" && objective == manager::CapacityObjective::kPrice)
    throw UsageError("--autoscale-rule envelope: only with --autoscale-objective floor");
  c.options.envelope_rule = f.rule == "envelope";
  const auto us = [](double s) { return static_cast<std::int64_t>(std::llround(s * 1e6)); };
  try {
    const manager::ProvisioningDelay delay = manager::ProvisioningDelay::parse(f.provisioning, seed);
    if (f.lead_given) check_range("--autoscale-lead-s", f.lead_s, 0, 86400);
    c.options.lead_us = f.lead_given ? us(f.lead_s) : delay.planning_us();
    c.options.envelope = manager::parse_envelope(f.envelope);
    manager::make_forecaster(f.forecast);  // checked here, used by the autoscaler
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  c.options.forecast = f.forecast;
  c.options.tick_us = us(f.tick_s);
  c.options.scale_in_holdoff_us = us(f.holdoff_s);
  c.options.scale_in_interval_us = us(f.step_interval_s);
  c.options.hysteresis = f.hysteresis;
  c.options.min_workers = f.min_workers;
  c.options.max_workers = f.max_workers;
  c.target = manager::CapacityTarget{f.max_violation, f.min_accuracy, objective,
                                     objective == manager::CapacityObjective::kPrice ? f.worker_price : 0};
  c.provisioning = f.provisioning;
  c.seed = seed ^ 0xa5ca1e5ULL;
  return c;
}

}  // namespace lull::cli
