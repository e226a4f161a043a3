#include "runtime/frontend/build_info.h"

#include "runtime/net/prometheus_text.h"

#ifndef LULL_VERSION
#define LULL_VERSION "unknown"
#endif
#ifndef LULL_GIT_COMMIT
#define LULL_GIT_COMMIT "unknown"
#endif

namespace lull::frontend {

std::string build_version() { return LULL_VERSION; }
std::string build_git_commit() { return LULL_GIT_COMMIT; }

std::string render_build_info() {
  std::string out;
  net::prom::family(out, "lull_build_info", "gauge", "Always 1; the labels name the build that is serving.");
  net::prom::sample(out,
                    "lull_build_info{version=\"" + net::prom::escape(build_version()) + "\",git_commit=\"" +
                        net::prom::escape(build_git_commit()) + "\"}",
                    1);
  return out;
}

}  // namespace lull::frontend
