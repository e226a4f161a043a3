#include "runtime/session/shard_info.h"

#include "runtime/net/prometheus_text.h"

namespace lull::session {

std::string render_shard_info(const core::Shard& shard) {
  std::string out;
  net::prom::family(out, "lull_shard_info", "gauge",
                    "Always 1; shard=\"I/G\": this process is shard I (0-based) of G behind a balancer.");
  net::prom::sample(out, "lull_shard_info{shard=\"" + net::prom::escape(shard.label()) + "\"}", 1);
  return out;
}

}  // namespace lull::session
