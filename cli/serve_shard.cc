#include "cli/serve_shard.h"

#include <stdexcept>
#include <utility>

#include "cli/commands.h"
#include "runtime/manager/shard_variants.h"
#include "runtime/session/shard_info.h"
#include "runtime/core/text_template.h"

namespace lull::cli {

ServeShard::ServeShard(std::string text) : text_(std::move(text)) {
  if (!enabled()) return;
  try {
    shard_ = core::parse_shard(text_);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shard " + text_ + ": " + e.what());
  }
}

void ServeShard::keep_own(std::vector<torchserve::WorkerEndpoint>& servers) const {
  if (!enabled()) return;
  std::vector<torchserve::WorkerEndpoint> mine;
  try {
    for (std::size_t j : core::shard_members(shard_, servers.size())) mine.push_back(servers[j]);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shard " + text_ + ": " + e.what());
  }
  servers = std::move(mine);
}

std::vector<core::PolicyTable> ServeShard::view(std::vector<core::PolicyTable> library, int local_workers) const {
  if (!enabled()) return library;
  try {
    return core::shard_library(library, shard_, local_workers);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shard " + text_ + ": " + e.what());
  }
}

void ServeShard::configure_pool(server::AutoscaleSpec& autoscale) const {
  const std::string kMark = "{shard}";
  pools::KubernetesPoolOptions& k = autoscale.kubernetes;
  if (!enabled()) {
    if (autoscale.pool == "kubernetes" &&
        (k.deployment.find(kMark) != std::string::npos || k.service.find(kMark) != std::string::npos))
      throw UsageError("--k8s-deployment/--k8s-service: {shard} without --shard");
    return;
  }
  if (autoscale.pool == "kubernetes") {
    if (k.deployment.find(kMark) == std::string::npos || k.service.find(kMark) == std::string::npos)
      throw UsageError("--shard " + text_ + " with --worker-pool kubernetes: --k8s-deployment and --k8s-service need " +
                       "{shard} (each shard scales its own Deployment, e.g. models-{shard}; docs/operators-guide.md)");
    const std::string index = std::to_string(shard_.index);
    k.deployment = core::fill_template(k.deployment, {{kMark, index}});
    k.service = core::fill_template(k.service, {{kMark, index}});
  }
  pools::LocalProcessPoolOptions& local = autoscale.local;
  local.port_modulus = shard_.count;
  local.port_residue = shard_.index;
  local.id_prefix = "local-" + std::to_string(shard_.index) + "-";
}

std::unique_ptr<core::PolicyCompiler> ServeShard::online(core::PolicyCompiler& global,
                                                         const std::vector<core::PolicyTable>& library) const {
  if (!enabled()) return nullptr;
  return std::make_unique<core::ShardPolicyCompiler>(global, shard_, library.at(0).loads_qps());
}

std::vector<manager::ModelVariant> ServeShard::variants(std::vector<manager::ModelVariant> variants,
                                                        int local_workers) const {
  if (!enabled()) return variants;
  try {
    return manager::shard_variants(std::move(variants), shard_, local_workers);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shard " + text_ + " with --variant-sets: " + e.what());
  }
}

void ServeShard::configure_drift(server::DriftSpec& drift) const {
  if (!enabled()) return;
  schema::PolicyLibrary held;
  for (const auto& set : drift.served.sets())
    if (shard_.has_view(set.workers())) *held.add_sets() = set;
  if (held.sets_size() == 0)
    throw UsageError("--shard " + text_ + " with --recompile-on-drift: no policy set for a multiple of " +
                     std::to_string(shard_.count) + " workers");
  drift.served = std::move(held);
  drift.view = [shard = shard_](const core::PolicyTable& t) { return core::shard_table(t, shard); };
}

void ServeShard::configure(session::ServeOptions& options) const {
  if (!enabled()) return;
  options.arrival_thinning = shard_.count;
  auto before = options.extra_metrics;
  options.extra_metrics = [before, shard = shard_] {
    return (before ? before() : std::string()) + session::render_shard_info(shard);
  };
}

std::string ServeShard::describe(int workers_up) const {
  if (!enabled()) return "";
  return " (shard " + shard_.label() + ": policies for " + std::to_string(shard_.count * workers_up) + " workers at " +
         std::to_string(shard_.count) + "x this shard's load)";
}

}  // namespace lull::cli
