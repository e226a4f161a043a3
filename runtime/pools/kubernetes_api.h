#pragma once
// The few Kubernetes API calls the Kubernetes worker pool makes, over the
// net layer's HttpTransport (libcurl; an in-memory fake in tests): read and set a Deployment's replica
// count through its scale subresource, mark the pod to remove first, and
// list a Service's EndpointSlices. Authentication is a service account's:
// the bearer token read from a file (on every call: kubelet rotates it) and
// the API server's CA from a file. Calls that fail for a reason that may pass
// (409 Conflict, 429, 5xx, no answer) are retried with exponential backoff,
// a bounded number of times; the error then names the call, the status,
// Kubernetes' own reason and message, and the attempts. A hanging API server
// must not block the caller (the manager thread) for the attempts' timeouts
// times the attempts: the calls of one sequence (begin_sequence(): one pool
// call, a refresh or a scale-out) share a time budget, their attempts and
// backoff waits together; each attempt's timeout is cut to what is left, and
// a call gives up when no wait and attempt fit in it any more. interrupt()
// (lull is stopping: SIGTERM) ends a backoff wait or an attempt at once.
//
// A hostile or broken API server cannot make lull misbehave: answers are
// read by kubernetes_objects.h (every field checked, the error names it), a
// body over max_response_bytes fails the call (not retried), and a redirect
// is never followed (the API server is the one lull was given; a 3xx fails
// the call naming where it pointed). docs/operators-guide.md lists the probes.
//
//   GET   /apis/apps/v1/namespaces/NS/deployments/NAME/scale
//   PATCH /apis/apps/v1/namespaces/NS/deployments/NAME/scale
//         Content-Type: application/merge-patch+json   {"spec":{"replicas":N}}
//   PATCH /api/v1/namespaces/NS/pods/POD
//         Content-Type: application/merge-patch+json
//         {"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"-1000"}}}
//   GET   /apis/discovery.k8s.io/v1/namespaces/NS/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3DSVC
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/pools/kubernetes_objects.h"
#include "runtime/net/http_transport.h"

namespace lull::pools {

// One failed attempt of a call, as the caller's hook sees it (for the log
// and /metrics: a retry is otherwise invisible).
struct KubernetesApiAttempt {
  std::string method, path;
  int status = 0;           // 0: no answer (transport error)
  std::string description;  // describe_kubernetes_error(): "HTTP 409 Conflict: the object has been modified ..."
  int attempt = 1;          // 1-based
  int max_attempts = 1;
  bool retrying = false;        // false: the call gives up (or the status is not worth retrying)
  std::int64_t backoff_ms = 0;  // the wait before the next attempt, when retrying
  // Not retrying because the sequence's time budget is spent (it would have been otherwise).
  bool out_of_time = false;
  std::int64_t budget_ms = 0;  // the budget, when out_of_time
};

struct KubernetesApiOptions {
  std::string server;  // https://HOST:PORT (in a pod: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";  // empty: the system CAs
  int max_attempts = 5;                                                          // per call, the first included
  std::int64_t backoff_initial_ms = 200;                                         // doubled after each failed attempt...
  std::int64_t backoff_max_ms = 5000;                                            // ...up to this
  std::int64_t timeout_ms = 10000;                                               // per attempt
  // The time one sequence of calls may take (begin_sequence()), every
  // attempt and backoff wait counted; 0: no limit (attempts x timeout).
  std::int64_t sequence_budget_ms = 5000;
  // A larger answer fails the call: 100k endpoints (~15 MB) fit.
  std::int64_t max_response_bytes = std::int64_t{32} << 20;
  // How the client waits between attempts; tests record the waits instead.
  // Empty: a wait that interrupt() ends.
  std::function<void(std::int64_t ms)> sleep_ms;
  // Called after each failed attempt, before the wait; may be empty.
  std::function<void(const KubernetesApiAttempt&)> on_failed_attempt;
};

struct KubernetesApiError : std::runtime_error {
  KubernetesApiError(const std::string& what, int status) : std::runtime_error(what), status(status) {}
  int status;  // the last HTTP status; 0 when no answer came
};

class KubernetesApi {
 public:
  // `client` must outlive this. Throws std::invalid_argument on a server
  // URL that is not http(s)://HOST:PORT.
  KubernetesApi(net::HttpTransport& client, KubernetesApiOptions options);

  // Starts a sequence: the calls from here to the next begin_sequence()
  // share options.sequence_budget_ms. The caller runs one sequence at a time.
  void begin_sequence() { spent_ms_ = 0; }
  // Any thread: the call in progress (its attempt or its backoff wait) and
  // every later one fail at once with "stopped (lull is shutting down)".
  void interrupt();

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
  net::HttpResponse call(const std::string& method, const std::string& path, const std::string& body);
  std::string read_token() const;
  // The request's answer, or a cancelled one once interrupt() is called.
  net::HttpResponse fetch(net::HttpRequest request);
  // Waits `ms` (options_.sleep_ms when set); false when interrupted.
  bool wait_ms(std::int64_t ms);
  bool interrupted();
  [[noreturn]] void throw_stopped(const std::string& method, const std::string& path);

  net::HttpTransport& client_;
  KubernetesApiOptions options_;
  // This sequence's time so far: attempts as measured on the steady clock,
  // backoff waits as asked of sleep_ms (so recorded waits count too).
  std::int64_t spent_ms_ = 0;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopped_ = false;
  net::HttpRequestId in_flight_ = 0;  // the attempt interrupt() cancels; 0: none
};

// "the pool call's time budget of 5000 ms is spent" (errors and log lines).
std::string describe_budget_spent(std::int64_t budget_ms);

// "HTTP 409 Conflict: the object has been modified ..." from a Kubernetes
// Status body {"kind":"Status","reason","message","code"}; the transport
// error, or "HTTP N", when the body is not one; a redirect names its Location
// and says it was not followed.
std::string describe_kubernetes_error(const net::HttpResponse& r);

}  // namespace lull::pools
