#pragma once
// The standard process_* families (CPU seconds, resident and virtual memory,
// start time, open and max file descriptors), read from /proc the way the
// Prometheus client libraries do, so lull's process shows up in the same
// dashboards as any other exporter. Families /proc cannot give are left out.
#include <string>

namespace lull::session {

std::string render_process_metrics();

}  // namespace lull::session
