#pragma once
// `lull serve --policies FLEET.pb --fleet-servers SERVERS.json`: a mixed
// fleet (docs/operators-guide.md "Serving"). Reads the fleet file and the servers of
// each (class, kind) group, checks them against each other, and builds the
// ServeSpec's FleetSpec; kept out of serve_command.cc (the composition root),
// which hands it the flags.
#include <cstdint>
#include <string>

#include "runtime/server/serve_spec.h"

namespace lull::cli {

// SERVERS.json: {"CLASS": {"KIND": ["http://H:P", ...]}, ...} (a group may
// also be {"servers": [...], "command": "..."}), one URL per worker of that
// kind in that class (management URLs: the same). Throws
// UsageError naming --fleet-servers and the class/kind for: a class or kind
// the fleet lacks, a class without servers, a group whose server count is
// not its kind's worker count, a bad URL, a file that is not that shape.
// `recompile_out` (not empty): --recompile-on-drift for every group, each
// drifting kind recompiled alone and the fleet file written there with that
// kind's set replaced.
// `autoscale`: a group's entry is {"command": "CMD {port}"} (absent:
// --worker-command) and lists no servers; fleet_autoscale() then gives
// each group its pool and autoscaler.
server::FleetSpec fleet_spec(const std::string& policies, const std::string& servers_file,
                             const std::string& recompile_out, std::uint64_t seed, bool autoscale = false);

// --autoscale on a fleet (docs/operators-guide.md "Autoscaling a fleet"): each group's
// local pool and autoscaler are the flags' (`base`) with the group's own
// command (else --worker-command; neither: UsageError naming the group),
// ports and worker IDs of its own (local-gI-N: several pools on one host, as
// shards), its class's violation target (manager::group_target), and its
// kind's count in the file as its initial workers. --worker-pool kubernetes:
// each group's own Deployment and Service instead (cli/fleet_kubernetes.h),
// and a group's command is refused.
void fleet_autoscale(server::FleetSpec& fleet, const server::AutoscaleSpec& base);

// One line for the start-up log: each class, its SLO and its kinds' servers.
std::string describe_fleet(const server::FleetSpec& fleet);

}  // namespace lull::cli
