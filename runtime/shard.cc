#include "runtime/shard.h"

#include <cstdlib>
#include <stdexcept>

namespace lull::runtime {
namespace {

// A whole non-negative number in [0, 1e6], the whole of `s`; -1 otherwise.
int whole_number(const std::string& s) {
  if (s.empty() || s.size() > 7) return -1;
  for (char c : s)
    if (c < '0' || c > '9') return -1;
  return std::atoi(s.c_str());
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const int index = slash == std::string::npos ? -1 : whole_number(text.substr(0, slash));
  const int count = slash == std::string::npos ? -1 : whole_number(text.substr(slash + 1));
  if (index < 0 || count < 0) throw std::invalid_argument("expected I/G, e.g. 0/3 (shard I of G, 0-based)");
  if (count == 0) throw std::invalid_argument("the shard count G must be at least 1");
  if (index >= count)
    throw std::invalid_argument("the shard index is 0-based, so it must be below G (0.." + std::to_string(count - 1) +
                                ")");
  return Shard{index, count};
}

std::vector<std::size_t> shard_members(const Shard& shard, std::size_t total) {
  if (total < static_cast<std::size_t>(shard.count))
    throw std::invalid_argument(std::to_string(shard.count) + " shards but " + std::to_string(total) +
                                " servers: every shard needs at least one");
  std::vector<std::size_t> mine;
  for (std::size_t j = static_cast<std::size_t>(shard.index); j < total; j += static_cast<std::size_t>(shard.count))
    mine.push_back(j);
  return mine;
}

std::vector<PolicyTable> shard_library(const std::vector<PolicyTable>& library, const Shard& shard, int local_workers) {
  std::vector<PolicyTable> out;
  bool covers_local = false;
  std::string compiled;
  for (const PolicyTable& t : library) {
    compiled += (compiled.empty() ? "" : ", ") + std::to_string(t.workers);
    if (t.workers % shard.count != 0) continue;
    PolicyTable view = t;
    view.workers = t.workers / shard.count;
    for (CompiledPolicy& p : view.policies) p.load_qps = p.load_qps / shard.count;
    covers_local = covers_local || view.workers == local_workers;
    out.push_back(std::move(view));
  }
  if (!covers_local)
    throw std::invalid_argument("shard " + shard.label() + " has " + std::to_string(local_workers) +
                                " servers, so it needs policies compiled for " +
                                std::to_string(local_workers * shard.count) + " workers (" +
                                std::to_string(shard.count) + " shards x " + std::to_string(local_workers) +
                                "); the policies hold worker counts " + compiled);
  return out;
}

}  // namespace lull::runtime
