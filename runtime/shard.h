#pragma once
// lull as one of G shards behind a per-request round-robin balancer (issue
// 20, docs/scaling.md "Shards"). The balancer hands shard I every G-th
// arrival and the shard hands each of its K workers every K-th of those, so
// each worker sees every (G*K)-th arrival of the global stream: exactly what
// one lull with G*K workers gives it. The policies compiled for G*K workers
// at the global load are therefore the shard's, and what maps one to the
// other is the load per worker, the invariant: the shard's K workers at its
// own load L/G are the fleet's G*K workers at L.
#include <cstddef>
#include <string>
#include <vector>

#include "runtime/policy_table.h"

namespace lull::runtime {

struct Shard {
  int index = 0;  // I, 0-based (a StatefulSet pod's ordinal)
  int count = 1;  // G; 1: not sharded
  std::string label() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "I/G" with 0 <= I < G; throws std::invalid_argument saying what is wrong
// (the caller names the text).
Shard parse_shard(const std::string& text);

// The servers (positions in a list of `total`) shard I owns: j with
// j mod G == I, in list order. Every shard of G given the same list gets a
// disjoint share and together they cover it. Throws std::invalid_argument
// when there are fewer servers than shards (some shard would own none).
std::vector<std::size_t> shard_members(const Shard& shard, std::size_t total);

// The policy library as the shard serves it: each table compiled for
// N = G*K workers becomes one for K workers whose policies' loads are the
// compiled ones divided by G (the same actions: per-worker load unchanged).
// A table whose N is not a multiple of G has no exact shard view and is left
// out. Throws std::invalid_argument when no table is left for `local_workers`
// (the shard's own servers), naming the worker count it needed.
std::vector<PolicyTable> shard_library(const std::vector<PolicyTable>& library, const Shard& shard, int local_workers);

}  // namespace lull::runtime
