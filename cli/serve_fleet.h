#pragma once
// `lull serve --policies FLEET.pb --fleet-servers SERVERS.json`: a mixed
// fleet (docs/fleets.md "Serving"). Reads the fleet file and the servers of
// each (class, kind) group, checks them against each other, and builds the
// ServeSpec's FleetSpec; kept out of serve_command.cc (the composition root),
// which hands it the flags.
#include <cstdint>
#include <string>

#include "runtime/server/serve_spec.h"

namespace lull::cli {

// SERVERS.json: {"CLASS": {"KIND": ["http://H:P", ...]}, ...}, one URL per
// worker of that kind in that class (management URLs: the same). Throws
// UsageError naming --fleet-servers and the class/kind for: a class or kind
// the fleet lacks, a class without servers, a group whose server count is
// not its kind's worker count, a bad URL, a file that is not that shape.
// `recompile_out` (not empty): --recompile-on-drift for every group, each
// drifting kind recompiled alone and the fleet file written there with that
// kind's set replaced.
server::FleetSpec fleet_spec(const std::string& policies, const std::string& servers_file,
                             const std::string& recompile_out, std::uint64_t seed);

// One line for the start-up log: each class, its SLO and its kinds' servers.
std::string describe_fleet(const server::FleetSpec& fleet);

}  // namespace lull::cli
