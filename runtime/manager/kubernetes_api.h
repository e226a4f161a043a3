#pragma once
// The few Kubernetes API calls the Kubernetes worker pool makes, over the
// serve layer's HTTP client (libcurl): read and set a Deployment's replica
// count through its scale subresource, mark the pod to remove first, and
// list a Service's EndpointSlices. Authentication is a service account's:
// the bearer token read from a file (on every call: kubelet rotates it) and
// the API server's CA from a file. Calls that fail for a reason that may pass
// (409 Conflict, 429, 5xx, no answer) are retried with exponential backoff,
// a bounded number of times; the error then names the call, the status,
// Kubernetes' own reason and message, and the attempts.
//
//   GET   /apis/apps/v1/namespaces/NS/deployments/NAME/scale
//   PATCH /apis/apps/v1/namespaces/NS/deployments/NAME/scale
//         Content-Type: application/merge-patch+json   {"spec":{"replicas":N}}
//   PATCH /api/v1/namespaces/NS/pods/POD
//         Content-Type: application/merge-patch+json
//         {"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"-1000"}}}
//   GET   /apis/discovery.k8s.io/v1/namespaces/NS/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3DSVC
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/serve/http_client.h"

namespace lull::manager {

// One failed attempt of a call, as the caller's hook sees it (for the log
// and /metrics: a retry is otherwise invisible).
struct KubernetesApiAttempt {
  std::string method, path;
  int status = 0;           // 0: no answer (transport error)
  std::string description;  // describe_kubernetes_error(): "HTTP 409 Conflict: the object has been modified ..."
  int attempt = 1;          // 1-based
  int max_attempts = 1;
  bool retrying = false;    // false: the call gives up (or the status is not worth retrying)
  std::int64_t backoff_ms = 0;  // the wait before the next attempt, when retrying
};

struct KubernetesApiOptions {
  std::string server;          // https://HOST:PORT (in a pod: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";  // empty: the system CAs
  int max_attempts = 5;                // per call, the first included
  std::int64_t backoff_initial_ms = 200;  // doubled after each failed attempt...
  std::int64_t backoff_max_ms = 5000;     // ...up to this
  std::int64_t timeout_ms = 10000;     // per attempt
  // How the client waits between attempts; tests record the waits instead.
  std::function<void(std::int64_t ms)> sleep_ms;
  // Called after each failed attempt, before the wait; may be empty.
  std::function<void(const KubernetesApiAttempt&)> on_failed_attempt;
};

struct KubernetesApiError : std::runtime_error {
  KubernetesApiError(const std::string& what, int status) : std::runtime_error(what), status(status) {}
  int status;  // the last HTTP status; 0 when no answer came
};

// One pod behind the Service, from its EndpointSlices.
struct KubernetesEndpoint {
  std::string pod;         // targetRef.name (the address when there is no targetRef)
  std::string address;     // the first address
  bool ready = true;       // conditions.ready; absent means ready (the API's advice)
  bool terminating = false;
};

class KubernetesApi {
 public:
  // `client` must outlive this. Throws std::invalid_argument on a server
  // URL that is not http(s)://HOST:PORT.
  KubernetesApi(serve::HttpClient& client, KubernetesApiOptions options);

  int get_replicas(const std::string& ns, const std::string& deployment);
  void set_replicas(const std::string& ns, const std::string& deployment, int replicas);
  // Makes the ReplicaSet remove this pod first at the next scale-down.
  void mark_pod_for_removal(const std::string& ns, const std::string& pod);
  // The Service's endpoints (one per pod, across its slices) and, into
  // `ports`, the slices' ports in order as (name, port).
  std::vector<KubernetesEndpoint> list_endpoints(const std::string& ns, const std::string& service,
                                                 std::vector<std::pair<std::string, int>>* ports);

 private:
  // Sends the request, retrying as documented above; returns the 2xx answer.
  serve::HttpResponse call(const std::string& method, const std::string& path, const std::string& body);
  std::string read_token() const;

  serve::HttpClient& client_;
  KubernetesApiOptions options_;
};

// "HTTP 409 Conflict: the object has been modified ..." from a Kubernetes
// Status body {"kind":"Status","reason","message","code"}; the transport
// error, or "HTTP N", when the body is not one.
std::string describe_kubernetes_error(const serve::HttpResponse& r);

}  // namespace lull::manager
