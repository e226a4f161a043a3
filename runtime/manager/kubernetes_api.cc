// Kubernetes API calls with retries (why and which: see kubernetes_api.h).
#include "runtime/manager/kubernetes_api.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/net/json_value.h"
#include "runtime/torchserve/model_management.h"
#include "runtime/torchserve/worker_endpoint.h"

namespace lull::manager {

using serve::HttpRequest;
using serve::HttpResponse;
using serve::JsonValue;

namespace {

constexpr const char* kMergePatch = "application/merge-patch+json";

bool worth_retrying(const HttpResponse& r) {
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
  JsonValue v;
  if (serve::parse_json(r.body, &v)) {
    const std::string reason = serve::json_string(v, "reason"), message = serve::json_string(v, "message");
    if (!reason.empty()) out += " " + reason;
    if (!message.empty()) out += ": " + message;
  }
  return out;
}

KubernetesApi::KubernetesApi(serve::HttpTransport& client, KubernetesApiOptions options)
    : client_(client), options_(std::move(options)) {
  const bool https = options_.server.rfind("https://", 0) == 0;
  // normalize_base_url checks http://HOST:PORT; the same rules hold for https.
  options_.server = https ? "https://" + serve::normalize_base_url("http://" + options_.server.substr(8)).substr(7)
                          : serve::normalize_base_url(options_.server);
  if (options_.max_attempts < 1) throw std::invalid_argument("Kubernetes API: max_attempts < 1");
  if (options_.sequence_budget_ms < 0) throw std::invalid_argument("Kubernetes API: sequence_budget_ms < 0");
  if (!options_.sleep_ms)
    options_.sleep_ms = [](std::int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
}

std::string KubernetesApi::read_token() const {
  std::ifstream in(options_.token_file);
  if (!in) throw KubernetesApiError(options_.token_file + ": cannot read the service account token", 0);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  token.erase(token.find_last_not_of(" \t\r\n") + 1);
  if (token.empty()) throw KubernetesApiError(options_.token_file + ": the service account token is empty", 0);
  return token;
}

HttpResponse KubernetesApi::call(const std::string& method, const std::string& path, const std::string& body) {
  const std::int64_t budget_ms = options_.sequence_budget_ms;
  const auto left_ms = [&] { return budget_ms - spent_ms_; };
  if (budget_ms > 0 && left_ms() <= 0)
    throw KubernetesApiError("Kubernetes API " + method + " " + path + ": not sent, " + describe_budget_spent(budget_ms), 0);
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
    if (!body.empty()) {
      req.body = body;
      req.content_type = kMergePatch;
    }
    const auto start = std::chrono::steady_clock::now();
    r = client_.fetch(req);
    spent_ms_ += std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
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
    options_.sleep_ms(backoff_ms);
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
  JsonValue v;
  const JsonValue* spec = serve::parse_json(r.body, &v) ? serve::json_field(v, "spec") : nullptr;
  // A Scale with 0 replicas may omit spec.replicas (omitempty).
  if (!spec) throw KubernetesApiError("Kubernetes API GET " + scale_path(ns, deployment) + ": no spec in the answer", r.status);
  return static_cast<int>(serve::json_number(*spec, "replicas", 0));
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
  const std::string path = "/apis/discovery.k8s.io/v1/namespaces/" + ns +
                           "/endpointslices?labelSelector=" + serve::url_encode("kubernetes.io/service-name=" + service);
  const auto r = call("GET", path, "");
  JsonValue v;
  const JsonValue* items = serve::parse_json(r.body, &v) ? serve::json_field(v, "items") : nullptr;
  if (!items || items->kind_case() != JsonValue::kListValue)
    throw KubernetesApiError("Kubernetes API GET " + path + ": no items list in the answer", r.status);
  std::vector<KubernetesEndpoint> out;
  ports->clear();
  for (const auto& slice : items->list_value().values()) {
    if (const JsonValue* ps = serve::json_field(slice, "ports"); ps && ps->kind_case() == JsonValue::kListValue) {
      for (const auto& p : ps->list_value().values()) {
        std::pair<std::string, int> port{serve::json_string(p, "name"), static_cast<int>(serve::json_number(p, "port", 0))};
        if (std::find(ports->begin(), ports->end(), port) == ports->end()) ports->push_back(std::move(port));
      }
    }
    const JsonValue* endpoints = serve::json_field(slice, "endpoints");
    if (!endpoints || endpoints->kind_case() != JsonValue::kListValue) continue;  // a slice with no endpoints: null
    for (const auto& e : endpoints->list_value().values()) {
      KubernetesEndpoint ep;
      if (const JsonValue* a = serve::json_field(e, "addresses"); a && a->kind_case() == JsonValue::kListValue &&
                                                                    a->list_value().values_size() > 0)
        ep.address = a->list_value().values(0).string_value();
      if (const JsonValue* ref = serve::json_field(e, "targetRef")) ep.pod = serve::json_string(*ref, "name");
      if (ep.pod.empty()) ep.pod = ep.address;
      if (const JsonValue* c = serve::json_field(e, "conditions")) {
        ep.ready = serve::json_bool(*c, "ready", true);
        ep.terminating = serve::json_bool(*c, "terminating", false);
      }
      if (ep.address.empty()) continue;
      // A pod can show in two slices while they are being updated: keep the first.
      if (std::none_of(out.begin(), out.end(), [&](const KubernetesEndpoint& o) { return o.pod == ep.pod; }))
        out.push_back(std::move(ep));
    }
  }
  return out;
}

}  // namespace lull::manager
