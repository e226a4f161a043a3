// Failed Kubernetes API attempts for the log and /metrics (why: see
// kubernetes_api_stats.h).
#include "runtime/pools/kubernetes_api_stats.h"

#include "runtime/net/prometheus_text.h"

namespace lull::pools {

std::string KubernetesApiStats::resource_of(const std::string& path) {
  const std::string p = path.substr(0, path.find('?'));
  if (p.size() >= 6 && p.compare(p.size() - 6, 6, "/scale") == 0) return "scale";
  if (p.find("/pods/") != std::string::npos) return "pods";
  if (p.find("/endpointslices") != std::string::npos) return "endpointslices";
  return "other";
}

std::string KubernetesApiStats::record(const KubernetesApiAttempt& a) {
  const std::string resource = resource_of(a.path);
  std::string line = "kubernetes API: " + a.method + " " + a.path + ": " + a.description + " (attempt " +
                     std::to_string(a.attempt) + " of " + std::to_string(a.max_attempts) + "); ";
  if (a.retrying)
    line += "retrying in " + std::to_string(a.backoff_ms) + " ms";
  else if (a.out_of_time)
    line += "giving up: " + describe_budget_spent(a.budget_ms);
  else if (a.attempt >= a.max_attempts)
    line += "giving up";
  else
    line += "not retried (not a failure that may pass)";
  std::lock_guard<std::mutex> lock(mu_);
  failed_[{a.method, resource, a.status}]++;
  if (!a.retrying) gave_up_[{a.method, resource}]++;
  last_ = a.method + " " + resource + ": " + a.description;
  return line;
}

std::string KubernetesApiStats::metrics_text() {
  namespace prom = net::prom;
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  net::prom::family(
      out, "lull_kubernetes_api_failed_attempts_total", "counter",
      "Kubernetes API requests that failed (status 0: no answer), each attempt of a retried call counted.");
  for (const auto& [key, n] : failed_) {
    const auto& [method, resource, status] = key;
    net::prom::sample(out,
                      "lull_kubernetes_api_failed_attempts_total{method=\"" + method + "\",resource=\"" + resource +
                          "\",status=\"" + std::to_string(status) + "\"}",
                      static_cast<double>(n));
  }
  net::prom::family(out, "lull_kubernetes_api_gave_up_total", "counter",
                    "Kubernetes API calls that failed for good (retries exhausted, or an answer not worth retrying).");
  for (const auto& [key, n] : gave_up_)
    net::prom::sample(out,
                      "lull_kubernetes_api_gave_up_total{method=\"" + key.first + "\",resource=\"" + key.second + "\"}",
                      static_cast<double>(n));
  if (!last_.empty()) {
    net::prom::family(out, "lull_kubernetes_api_last_error_info", "gauge", "The last failed Kubernetes API request.");
    net::prom::sample(out, "lull_kubernetes_api_last_error_info{reason=\"" + net::prom::escape(last_) + "\"}", 1);
  }
  return out;
}

}  // namespace lull::pools
