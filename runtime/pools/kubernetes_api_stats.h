#pragma once
// What the Kubernetes API calls went through, for the operator: a retried
// call (409 Conflict, 500, no answer) succeeds in the end and would leave no
// trace, so each failed attempt is counted here (by method, resource and
// status, and the calls that gave up) for /metrics, and described in one log
// line saying what answered, which attempt it was and what comes next.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "runtime/pools/kubernetes_api.h"

namespace lull::pools {

class KubernetesApiStats {
 public:
  // Counts the attempt; returns its log line, e.g. "kubernetes API: PATCH
  // /apis/.../scale: HTTP 409 Conflict: ... (attempt 1 of 5); retrying in 200 ms".
  std::string record(const KubernetesApiAttempt& a);
  // Prometheus text: lull_kubernetes_api_failed_attempts_total{method,resource,status},
  // lull_kubernetes_api_gave_up_total{method,resource}, lull_kubernetes_api_last_error_info{reason}.
  std::string metrics_text();

  // "scale", "pods", "endpointslices" (the path's resource; "other" else).
  static std::string resource_of(const std::string& path);

 private:
  std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> failed_;  // (method, resource, status)
  std::map<std::pair<std::string, std::string>, std::uint64_t> gave_up_;       // (method, resource)
  std::string last_;
};

}  // namespace lull::pools
