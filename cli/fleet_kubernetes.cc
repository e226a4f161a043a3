#include "cli/fleet_kubernetes.h"

#include <map>

#include "cli/commands.h"
#include "runtime/pools/kubernetes_objects.h"
#include "runtime/core/text_template.h"

namespace lull::cli {

namespace {

// `flag`'s template filled for group `g`; `seen` maps each name to the group that took it first.
std::string group_name(const std::string& flag, const std::string& pattern, const FleetKubernetesGroup& g,
                       bool (*valid)(const std::string&), const char* what,
                       std::map<std::string, const FleetKubernetesGroup*>& seen) {
  const std::string name = core::fill_template(pattern, {{"{class}", g.cls}, {"{kind}", g.kind}});
  const std::string at = flag + " " + pattern + ": class '" + g.cls + "', kind '" + g.kind + "': '" + name + "' ";
  if (!valid(name)) throw UsageError(at + "is not a " + what);
  const auto [it, fresh] = seen.emplace(name, &g);
  if (!fresh)
    throw UsageError(
        at + "is class '" + it->second->cls + "', kind '" + it->second->kind +
        "''s name too (each group scales its own: put {class} and {kind} in it, e.g. models-{class}-{kind})");
  return name;
}

}  // namespace

void name_fleet_deployments(const std::vector<FleetKubernetesGroup>& groups) {
  std::map<std::string, const FleetKubernetesGroup*> deployments, services;
  for (const auto& g : groups) {
    const std::string deployment =
        group_name("--k8s-deployment", g.pool->deployment, g, pools::is_object_name,
                   "Deployment name (a DNS-1123 subdomain: a-z, 0-9, '-', '.')", deployments);
    const std::string service =
        group_name("--k8s-service", g.pool->service, g, pools::is_service_name,
                   "Service name (a DNS-1035 label: a-z, 0-9, '-', a letter first, at most 63)", services);
    g.pool->deployment = deployment;
    g.pool->service = service;
  }
}

void refuse_group_marks(const pools::KubernetesPoolOptions& pool) {
  for (const std::string& name : {pool.deployment, pool.service})
    if (name.find("{class}") != std::string::npos || name.find("{kind}") != std::string::npos)
      throw UsageError("--k8s-deployment/--k8s-service: {class} or {kind} without a fleet policy file");
}

}  // namespace lull::cli
