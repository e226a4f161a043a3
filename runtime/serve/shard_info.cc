#include "runtime/serve/shard_info.h"

#include "runtime/net/prometheus_text.h"

namespace lull::serve {

std::string render_shard_info(const runtime::Shard& shard) {
  std::string out;
  prom::family(out, "lull_shard_info", "gauge",
               "Always 1; shard=\"I/G\": this process is shard I (0-based) of G behind a balancer.");
  prom::sample(out, "lull_shard_info{shard=\"" + prom::escape(shard.label()) + "\"}", 1);
  return out;
}

}  // namespace lull::serve
