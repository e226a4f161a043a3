#pragma once
// `lull serve --shard I/G`: one of G shards behind a per-request round-robin
// balancer (docs/operators-guide.md "Shards"). The rules are runtime/core/shard.h's; this
// file applies them to the serving set-up (its servers or its worker pool,
// the library it serves, online compilation, variants, drift recompilation,
// its /metrics and start-up line), kept out of serve_command.cc (the
// composition root), which only hands it each piece.
#include <memory>
#include <string>
#include <vector>

#include "runtime/manager/variant_switcher.h"
#include "runtime/core/policy_provider.h"
#include "runtime/core/policy_table.h"
#include "runtime/session/serve_session.h"
#include "runtime/server/serve_spec.h"
#include "runtime/core/shard.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::cli {

class ServeShard {
 public:
  // `text` empty: not sharded, and every call below changes nothing.
  // Throws UsageError naming --shard.
  explicit ServeShard(std::string text);

  bool enabled() const { return !text_.empty(); }
  // Keeps the servers j with j mod G = I (UsageError when fewer than G).
  void keep_own(std::vector<torchserve::WorkerEndpoint>& servers) const;
  // The library as this shard serves it, for its `local_workers` servers
  // (0: a worker pool picks the count). UsageError when it holds no set for
  // G x local_workers (or, with 0, none for a multiple of G).
  std::vector<core::PolicyTable> view(std::vector<core::PolicyTable> library, int local_workers) const;
  // The shard's worker pool: the local pool's ports and worker names in this
  // shard's class (I mod G), the Kubernetes pool's Deployment and Service
  // with {shard} replaced by I (UsageError when either lacks it: G shards
  // would scale one Deployment). Not sharded: {shard} is refused.
  void configure_pool(server::AutoscaleSpec& autoscale) const;
  // Online compilation for this shard (core::ShardPolicyCompiler over
  // `global`, the fleet's grid from `library`, the file as read); nullptr
  // when not sharded.
  std::unique_ptr<core::PolicyCompiler> online(core::PolicyCompiler& global,
                                               const std::vector<core::PolicyTable>& library) const;
  // The variants as this shard serves them (manager::shard_variants).
  std::vector<manager::ModelVariant> variants(std::vector<manager::ModelVariant> variants, int local_workers) const;
  // Drift recompilation: the sets the shard holds (those with a view) are
  // recompiled and swapped in through the shard view (UsageError when
  // drift.served has none).
  void configure_drift(server::DriftSpec& drift) const;
  // lull_shard_info on /metrics; the burstiness estimate scaled to the fleet's stream.
  void configure(session::ServeOptions& options) const;
  // " (shard I/G: policies for G*K workers at Gx this shard's load)", or "".
  std::string describe(int workers_up) const;

 private:
  std::string text_;
  core::Shard shard_;
};

}  // namespace lull::cli
