#include "cli/serve_shard.h"

#include <stdexcept>
#include <utility>

#include "cli/commands.h"
#include "runtime/manager/shard_variants.h"
#include "runtime/serve/shard_info.h"
#include "runtime/text_template.h"

namespace lull::cli {

ServeShard::ServeShard(std::string text) : text_(std::move(text)) {
  if (!enabled()) return;
  try {
    shard_ = runtime::parse_shard(text_);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shard " + text_ + ": " + e.what());
  }
}

void ServeShard::keep_own(std::vector<serve::WorkerEndpoint>& servers) const {
  if (!enabled()) return;
  std::vector<serve::WorkerEndpoint> mine;
  try {
    for (std::size_t j : runtime::shard_members(shard_, servers.size())) mine.push_back(servers[j]);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shard " + text_ + ": " + e.what());
  }
  servers = std::move(mine);
}

std::vector<runtime::PolicyTable> ServeShard::view(std::vector<runtime::PolicyTable> library, int local_workers) const {
  if (!enabled()) return library;
  try {
    return runtime::shard_library(library, shard_, local_workers);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shard " + text_ + ": " + e.what());
  }
}

void ServeShard::configure_pool(server::AutoscaleSpec& autoscale) const {
  const std::string kMark = "{shard}";
  manager::KubernetesPoolOptions& k = autoscale.kubernetes;
  if (!enabled()) {
    if (autoscale.pool == "kubernetes" &&
        (k.deployment.find(kMark) != std::string::npos || k.service.find(kMark) != std::string::npos))
      throw UsageError("--k8s-deployment/--k8s-service: {shard} without --shard");
    return;
  }
  if (autoscale.pool == "kubernetes") {
    if (k.deployment.find(kMark) == std::string::npos || k.service.find(kMark) == std::string::npos)
      throw UsageError("--shard " + text_ + " with --worker-pool kubernetes: --k8s-deployment and --k8s-service need " +
                       "{shard} (each shard scales its own Deployment, e.g. models-{shard}; docs/scaling.md)");
    const std::string index = std::to_string(shard_.index);
    k.deployment = runtime::fill_template(k.deployment, {{kMark, index}});
    k.service = runtime::fill_template(k.service, {{kMark, index}});
  }
  manager::LocalProcessPoolOptions& local = autoscale.local;
  local.port_modulus = shard_.count;
  local.port_residue = shard_.index;
  local.id_prefix = "local-" + std::to_string(shard_.index) + "-";
}

std::unique_ptr<runtime::PolicyCompiler> ServeShard::online(runtime::PolicyCompiler& global,
                                                            const std::vector<runtime::PolicyTable>& library) const {
  if (!enabled()) return nullptr;
  return std::make_unique<runtime::ShardPolicyCompiler>(global, shard_, library.at(0).loads_qps());
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
  drift.view = [shard = shard_](const runtime::PolicyTable& t) { return runtime::shard_table(t, shard); };
}

void ServeShard::configure(serve::ServeOptions& options) const {
  if (!enabled()) return;
  auto before = options.extra_metrics;
  options.extra_metrics = [before, shard = shard_] {
    return (before ? before() : std::string()) + serve::render_shard_info(shard);
  };
}

std::string ServeShard::describe(int workers_up) const {
  if (!enabled()) return "";
  return " (shard " + shard_.label() + ": policies for " + std::to_string(shard_.count * workers_up) + " workers at " +
         std::to_string(shard_.count) + "x this shard's load)";
}

}  // namespace lull::cli
