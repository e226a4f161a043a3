#pragma once
// `lull serve --policies FLEET.pb --autoscale --worker-pool kubernetes`: each
// (class, kind) group scales its own Deployment, found through its own
// Service, named by --k8s-deployment and --k8s-service with {class} and
// {kind} replaced, as a shard's with {shard} (docs/operators-guide.md "Autoscaling a
// fleet").
#include <string>
#include <vector>

#include "runtime/pools/kubernetes_pool.h"

namespace lull::cli {

// One group's pool: `pool` as the flags left it (the templates).
struct FleetKubernetesGroup {
  std::string cls, kind;
  pools::KubernetesPoolOptions* pool;
};

// Fills each group's Deployment and Service from the templates. UsageError
// (one line, naming the flag): a name that is not a Deployment name (a
// DNS-1123 subdomain) or a Service name (a DNS-1035 label) once filled, or
// two groups filled to one name (they would scale one Deployment).
void name_fleet_deployments(const std::vector<FleetKubernetesGroup>& groups);

// Not a fleet: {class} or {kind} in the names is refused (UsageError).
void refuse_group_marks(const pools::KubernetesPoolOptions& pool);

}  // namespace lull::cli
