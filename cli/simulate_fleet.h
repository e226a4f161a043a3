#pragma once
// lull simulate on a fleet policy file (docs/operators-guide.md): every (class, kind)
// group in the simulator on its random share of the class's arrivals; the
// report per group, per class and for the fleet, simulated beside expected.
#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "cli/autoscale_flags.h"

namespace lull::cli {

struct FleetSimFlags {
  std::string policies, trace, replay, arrivals, latency, out;
  double load_qps = 0, duration_s = 0, trace_scale = 1;
  std::uint64_t seed = 1;
  AutoscaleFlags autoscale;  // --autoscale: per (class, kind) group (docs/operators-guide.md "Autoscaling a fleet")
};

// `vm` says which options were given: those a fleet run cannot take are refused.
int run_simulate_fleet(const boost::program_options::variables_map& vm, const FleetSimFlags& flags);

}  // namespace lull::cli
