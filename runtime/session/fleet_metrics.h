#pragma once
// /metrics for a fleet (docs/operators-guide.md "Serving"): every (class, kind)
// group's session renders its own series; here they become one exposition,
// each sample labelled with its group, each family once (Prometheus' text
// format wants a family's HELP/TYPE once and its samples together). The
// process-wide families (lull_build_info, process_*) come once, unlabelled.
#include <string>
#include <utility>
#include <vector>

namespace lull::session {

struct GroupMetrics {
  std::string labels;  // e.g. class="interactive",kind="c5" (values escaped)
  std::string text;    // the group's exposition
};

// The groups' families merged in order of first appearance, each sample
// with its group's labels first; process-wide families dropped.
std::string merge_group_metrics(const std::vector<GroupMetrics>& groups);

}  // namespace lull::session
