#pragma once
// lull as one of G shards behind a per-request round-robin balancer (issue
// 20, docs/operators-guide.md "Shards"). The balancer hands shard I every G-th
// arrival and the shard hands each of its K workers every K-th of those, so
// each worker sees every (G*K)-th arrival of the global stream: exactly what
// one lull with G*K workers gives it. The policies compiled for G*K workers
// at the global load are therefore the shard's, and what maps one to the
// other is the load per worker, the invariant: the shard's K workers at its
// own load L/G are the fleet's G*K workers at L.
#include <cstddef>
#include <string>
#include <vector>

#include "runtime/core/policy_provider.h"
#include "runtime/core/policy_table.h"

namespace lull::core {

struct Shard {
  int index = 0;  // I, 0-based (a StatefulSet pod's ordinal)
  int count = 1;  // G; 1: not sharded
  std::string label() const { return std::to_string(index) + "/" + std::to_string(count); }
  // A set for `workers` (the fleet's N) has a view in this shard: N is a multiple of G.
  bool has_view(int workers) const { return workers % count == 0; }
};

// "I/G" with 0 <= I < G; throws std::invalid_argument saying what is wrong
// (the caller names the text).
Shard parse_shard(const std::string& text);

// The servers (positions in a list of `total`) shard I owns: j with
// j mod G == I, in list order. Every shard of G given the same list gets a
// disjoint share and together they cover it. Throws std::invalid_argument
// when there are fewer servers than shards (some shard would own none).
std::vector<std::size_t> shard_members(const Shard& shard, std::size_t total);

// One table as the shard serves it: compiled for N = G*K workers, it becomes
// one for K workers whose policies' loads are the compiled ones divided by G
// (the same actions: per-worker load unchanged). Throws
// std::invalid_argument when N is not a multiple of G (no exact view).
PolicyTable shard_table(const PolicyTable& table, const Shard& shard);

// The policy library as the shard serves it: shard_table of each table, the
// tables whose N is not a multiple of G left out. Throws
// std::invalid_argument when no table is left for `local_workers` (the
// shard's own servers), naming the worker count it needed; local_workers 0:
// any count will do (a worker pool picks it: --autoscale), so only an empty
// view is refused.
std::vector<PolicyTable> shard_library(const std::vector<PolicyTable>& library, const Shard& shard, int local_workers);

// Online compilation in a shard: its Dispatcher asks for K workers at its
// load L (grid point or step of its view); that is the fleet's G*K workers
// at G*L, which `global` compiles exactly as it would for one lull of G*K
// workers, and the shard gets that table's shard_table. G*L is put back on
// the fleet's grid (`grid_qps`: the loads of the library's first table, as
// PolicyCatalog::wanted reads them), so the request `global` sees is the
// very one one big lull would send, bit for bit, and the loads of the
// policies on that grid come back as the shard asked for them (so its
// catalog knows the request as held).
class ShardPolicyCompiler final : public PolicyCompiler {
 public:
  // `global` outlives this; `grid_qps` ascending, not empty.
  ShardPolicyCompiler(PolicyCompiler& global, Shard shard, std::vector<double> grid_qps);
  PolicyTable compile(const PolicyRequest& request) override;
  void cancel() override { global_.cancel(); }
  // The fleet's request that the shard's stands for.
  PolicyRequest global_request(const PolicyRequest& shard_request) const;

 private:
  PolicyCompiler& global_;
  Shard shard_;
  std::vector<double> grid_qps_;
};

}  // namespace lull::core
