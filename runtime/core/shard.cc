#include "runtime/core/shard.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace lull::core {
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

PolicyTable shard_table(const PolicyTable& table, const Shard& shard) {
  if (!shard.has_view(table.workers))
    throw std::invalid_argument("shard " + shard.label() + ": a policy set for " + std::to_string(table.workers) +
                                " workers has no view for " + std::to_string(shard.count) + " shards (not a multiple)");
  PolicyTable view = table;
  view.workers = table.workers / shard.count;
  for (CompiledPolicy& p : view.policies) p.load_qps = p.load_qps / shard.count;
  return view;
}

std::vector<PolicyTable> shard_library(const std::vector<PolicyTable>& library, const Shard& shard, int local_workers) {
  std::vector<PolicyTable> out;
  bool covers_local = false;
  std::string compiled;
  for (const PolicyTable& t : library) {
    compiled += (compiled.empty() ? "" : ", ") + std::to_string(t.workers);
    if (!shard.has_view(t.workers)) continue;
    out.push_back(shard_table(t, shard));
    covers_local = covers_local || local_workers == 0 || out.back().workers == local_workers;
  }
  if (local_workers == 0 && out.empty())
    throw std::invalid_argument("shard " + shard.label() + " needs policies compiled for a multiple of " +
                                std::to_string(shard.count) + " workers; the policies hold worker counts " + compiled);
  if (!covers_local)
    throw std::invalid_argument("shard " + shard.label() + " has " + std::to_string(local_workers) +
                                " servers, so it needs policies compiled for " +
                                std::to_string(local_workers * shard.count) + " workers (" +
                                std::to_string(shard.count) + " shards x " + std::to_string(local_workers) +
                                "); the policies hold worker counts " + compiled);
  return out;
}

ShardPolicyCompiler::ShardPolicyCompiler(PolicyCompiler& global, Shard shard, std::vector<double> grid_qps)
    : global_(global), shard_(shard), grid_qps_(std::move(grid_qps)) {
  if (grid_qps_.empty()) throw std::invalid_argument("ShardPolicyCompiler: no grid");
}

PolicyRequest ShardPolicyCompiler::global_request(const PolicyRequest& r) const {
  PolicyRequest out = r;
  out.workers = r.workers * shard_.count;
  const double load = r.load_qps * shard_.count;
  out.load_qps = load;
  // The shard's grid is the fleet's divided by G, so G*L misses its grid
  // point by rounding at most: take the point (one big lull asks for it).
  const auto near = [load](double g) { return std::abs(g - load) <= 1e-9 * std::max(1.0, std::abs(g)); };
  for (double g : grid_qps_)
    if (near(g)) return out.load_qps = g, out;
  // Above the grid: the top plus whole steps (PolicyCatalog::wanted's rule).
  const double top = grid_qps_.back();
  const double step = grid_qps_.size() >= 2 ? top - grid_qps_[grid_qps_.size() - 2] : top;
  if (load > top && step > 0) {
    const double on_steps = top + std::round((load - top) / step) * step;
    if (near(on_steps)) out.load_qps = on_steps;
  }
  return out;
}

PolicyTable ShardPolicyCompiler::compile(const PolicyRequest& request) {
  const PolicyRequest global = global_request(request);
  PolicyTable view = shard_table(global_.compile(global), shard_);
  for (CompiledPolicy& p : view.policies)
    if (p.load_qps == global.load_qps / shard_.count) p.load_qps = request.load_qps;
  return view;
}

}  // namespace lull::core
