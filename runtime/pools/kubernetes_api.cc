// Kubernetes API calls with retries (why and which: see kubernetes_api.h).
#include "runtime/pools/kubernetes_api.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

#include "runtime/pools/kubernetes_objects.h"
#include "schema/bounded_file.h"
#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/model_management.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::pools {

using net::HttpRequest;
using net::HttpResponse;
using net::JsonValue;

namespace {

constexpr const char* kMergePatch = "application/merge-patch+json";

// Not a cancelled attempt (lull stops) nor one over the size cap (the next would be as large).
bool worth_retrying(const HttpResponse& r) {
  if (r.cancelled || r.too_large) return false;
  return !r.error.empty() || r.status == 409 || r.status == 429 || r.status >= 500;
}

std::string scale_path(const std::string& ns, const std::string& deployment) {
  return "/apis/apps/v1/namespaces/" + ns + "/deployments/" + deployment + "/scale";
}

}  // namespace

std::string describe_budget_spent(std::int64_t budget_ms) {
  return "the pool call's time budget of " + std::to_string(budget_ms) + " ms is spent";
}

std::string describe_kubernetes_error(const HttpResponse& r) {
  if (!r.error.empty()) return r.describe();
  std::string out = "HTTP " + std::to_string(r.status);
  if (r.status >= 300 && r.status < 400)
    return out + " redirect to " + r.header("location").substr(0, 200) +
           ": not followed (lull talks only to the API server it was given)";
  JsonValue v;
  if (net::parse_json(r.body, &v)) {
    const std::string reason = net::json_string(v, "reason"), message = net::json_string(v, "message");
    if (!reason.empty()) out += " " + reason;
    if (!message.empty()) out += ": " + message;
  }
  return out;
}

KubernetesApi::KubernetesApi(net::HttpTransport& client, KubernetesApiOptions options)
    : client_(client), options_(std::move(options)) {
  const bool https = options_.server.rfind("https://", 0) == 0;
  // normalize_base_url checks http://HOST:PORT; the same rules hold for https.
  options_.server = https ? "https://" + torchserve::normalize_base_url("http://" + options_.server.substr(8)).substr(7)
                          : torchserve::normalize_base_url(options_.server);
  if (options_.max_attempts < 1) throw std::invalid_argument("Kubernetes API: max_attempts < 1");
  if (options_.sequence_budget_ms < 0) throw std::invalid_argument("Kubernetes API: sequence_budget_ms < 0");
}

void KubernetesApi::interrupt() {
  net::HttpRequestId id;
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopped_ = true;
    id = in_flight_;
  }
  stop_cv_.notify_all();
  if (id) client_.cancel(id);
}

bool KubernetesApi::interrupted() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  return stopped_;
}

void KubernetesApi::throw_stopped(const std::string& method, const std::string& path) {
  throw KubernetesApiError("Kubernetes API " + method + " " + path + ": stopped (lull is shutting down)", 0);
}

bool KubernetesApi::wait_ms(std::int64_t ms) {
  if (options_.sleep_ms) {
    options_.sleep_ms(ms);
    return !interrupted();
  }
  std::unique_lock<std::mutex> lock(stop_mu_);
  return !stop_cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopped_; });
}

HttpResponse KubernetesApi::fetch(HttpRequest request) {
  // The answer lands in shared state: an interrupted call returns without
  // waiting for it, and a late callback finds the state still alive.
  struct Answer {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    HttpResponse r;
  };
  auto answer = std::make_shared<Answer>();
  std::unique_lock<std::mutex> lock(stop_mu_);
  if (stopped_) {
    HttpResponse cancelled;
    cancelled.cancelled = true;
    cancelled.error = "cancelled";
    return cancelled;
  }
  in_flight_ = client_.send(std::move(request), [answer](HttpResponse r) {
    std::lock_guard<std::mutex> a(answer->mu);
    answer->r = std::move(r);
    answer->done = true;
    answer->cv.notify_all();
  });
  lock.unlock();
  // interrupt() cancels the attempt; a transport that answers late anyway is not waited for.
  HttpResponse r;
  for (std::unique_lock<std::mutex> a(answer->mu);;) {
    if (answer->cv.wait_for(a, std::chrono::milliseconds(20), [&] { return answer->done; })) {
      r = std::move(answer->r);
      break;
    }
    a.unlock();
    if (interrupted()) {
      r.cancelled = true;
      r.error = "cancelled";
      break;
    }
    a.lock();
  }
  lock.lock();
  in_flight_ = 0;
  return r;
}

std::string KubernetesApi::read_token() const {
  // The bounded reader (schema/bounded_file.h): a FIFO or /dev/zero here
  // hung or grew every API call.
  std::string token;
  try {
    token = read_bounded_file(options_.token_file, FileKind::kKey);
  } catch (const FileReadError& e) {
    if (std::string(e.what()).find(": cannot open: ") != std::string::npos)
      throw KubernetesApiError(options_.token_file + ": cannot read the service account token", 0);
    throw KubernetesApiError(std::string(e.what()) + " (the service account token)", 0);
  }
  token.erase(token.find_last_not_of(" \t\r\n") + 1);
  if (token.empty()) throw KubernetesApiError(options_.token_file + ": the service account token is empty", 0);
  return token;
}

HttpResponse KubernetesApi::call(const std::string& method, const std::string& path, const std::string& body) {
  const std::int64_t budget_ms = options_.sequence_budget_ms;
  const auto left_ms = [&] { return budget_ms - spent_ms_; };
  if (interrupted()) throw_stopped(method, path);
  if (budget_ms > 0 && left_ms() <= 0)
    throw KubernetesApiError(
        "Kubernetes API " + method + " " + path + ": not sent, " + describe_budget_spent(budget_ms), 0);
  std::int64_t backoff_ms = options_.backoff_initial_ms;
  HttpResponse r;
  int attempt = 1;
  bool out_of_time = false;
  for (;; ++attempt) {
    HttpRequest req;
    req.method = method;
    req.url = options_.server + path;
    req.bearer_token = read_token();
    req.ca_file = options_.ca_file;
    req.timeout_ms = budget_ms > 0 ? std::min(options_.timeout_ms, left_ms()) : options_.timeout_ms;
    req.connect_timeout_ms = req.timeout_ms;
    req.max_response_bytes = options_.max_response_bytes;
    if (!body.empty()) {
      req.body = body;
      req.content_type = kMergePatch;
    }
    const auto start = std::chrono::steady_clock::now();
    r = fetch(std::move(req));
    if (interrupted()) throw_stopped(method, path);
    spent_ms_ +=
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    if (r.ok()) return r;
    const bool may_retry = worth_retrying(r) && attempt < options_.max_attempts;
    // A wait and then an attempt of at least a millisecond must fit in what is left.
    out_of_time = may_retry && budget_ms > 0 && left_ms() - backoff_ms < 1;
    const bool retrying = may_retry && !out_of_time;
    if (options_.on_failed_attempt)
      options_.on_failed_attempt(KubernetesApiAttempt{method, path, r.status, describe_kubernetes_error(r), attempt,
                                                      options_.max_attempts, retrying, retrying ? backoff_ms : 0,
                                                      out_of_time, out_of_time ? budget_ms : 0});
    if (!retrying) break;
    if (!wait_ms(backoff_ms)) throw_stopped(method, path);
    spent_ms_ += backoff_ms;
    backoff_ms = std::min(backoff_ms * 2, options_.backoff_max_ms);
  }
  std::string attempts = attempt > 1 ? "after " + std::to_string(attempt) + " attempts" : "";
  if (out_of_time) attempts += (attempts.empty() ? "" : "; ") + describe_budget_spent(budget_ms);
  throw KubernetesApiError("Kubernetes API " + method + " " + path + ": " + describe_kubernetes_error(r) +
                               (attempts.empty() ? "" : " (" + attempts + ")"),
                           r.status);
}

int KubernetesApi::get_replicas(const std::string& ns, const std::string& deployment) {
  const auto r = call("GET", scale_path(ns, deployment), "");
  try {
    return parse_scale_replicas(r.body);
  } catch (const KubernetesObjectError& e) {
    throw KubernetesApiError("Kubernetes API GET " + scale_path(ns, deployment) + ": " + e.what(), r.status);
  }
}

void KubernetesApi::set_replicas(const std::string& ns, const std::string& deployment, int replicas) {
  call("PATCH", scale_path(ns, deployment), "{\"spec\":{\"replicas\":" + std::to_string(replicas) + "}}");
}

void KubernetesApi::mark_pod_for_removal(const std::string& ns, const std::string& pod) {
  call("PATCH", "/api/v1/namespaces/" + ns + "/pods/" + pod,
       R"({"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"-1000"}}})");
}

std::vector<KubernetesEndpoint> KubernetesApi::list_endpoints(const std::string& ns, const std::string& service,
                                                              std::vector<std::pair<std::string, int>>* ports) {
  const std::string path = "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices?labelSelector=" +
                           torchserve::url_encode("kubernetes.io/service-name=" + service);
  const auto r = call("GET", path, "");
  try {
    KubernetesEndpoints read = parse_endpoint_slices(r.body);
    *ports = std::move(read.ports);
    return std::move(read.endpoints);
  } catch (const KubernetesObjectError& e) {
    throw KubernetesApiError("Kubernetes API GET " + path + ": " + e.what(), r.status);
  }
}

}  // namespace lull::pools
