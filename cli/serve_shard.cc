#include "cli/serve_shard.h"

#include <stdexcept>
#include <utility>

#include "cli/commands.h"
#include "runtime/serve/shard_info.h"

namespace lull::cli {

ServeShard::ServeShard(std::string text, bool other_modes) : text_(std::move(text)) {
  if (!enabled()) return;
  if (other_modes)
    throw UsageError("--shard " + text_ +
                     ": with --servers only (not --autoscale, online compilation, "
                     "--recompile-on-drift or --variant-sets)");
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
