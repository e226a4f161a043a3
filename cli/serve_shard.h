#pragma once
// `lull serve --shard I/G`: one of G shards behind a per-request round-robin
// balancer (docs/scaling.md "Shards"). The rules are runtime/shard.h's; this
// file applies them to the serving set-up (its servers, the library it
// serves, its /metrics and start-up line), kept out of serve_command.cc (the
// composition root), which only hands it each piece.
#include <string>
#include <vector>

#include "runtime/policy_table.h"
#include "runtime/serve/serve_session.h"
#include "runtime/shard.h"
#include "runtime/torchserve/worker_endpoint.h"

namespace lull::cli {

class ServeShard {
 public:
  // `text` empty: not sharded, and every call below changes nothing.
  // `other_modes`: --autoscale, online compilation, --recompile-on-drift or
  // --variant-sets asked for, which a shard does not take yet. Throws
  // UsageError naming --shard.
  ServeShard(std::string text, bool other_modes);

  bool enabled() const { return !text_.empty(); }
  // Keeps the servers j with j mod G = I (UsageError when fewer than G).
  void keep_own(std::vector<serve::WorkerEndpoint>& servers) const;
  // The library as this shard serves it, for its `local_workers` servers
  // (UsageError when it holds no set for G x local_workers).
  std::vector<runtime::PolicyTable> view(std::vector<runtime::PolicyTable> library, int local_workers) const;
  // lull_shard_info on /metrics.
  void configure(serve::ServeOptions& options) const;
  // " (shard I/G: policies for G*K workers at Gx this shard's load)", or "".
  std::string describe(int workers_up) const;

 private:
  std::string text_;
  runtime::Shard shard_;
};

}  // namespace lull::cli
