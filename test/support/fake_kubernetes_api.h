#pragma once
// An in-memory Kubernetes API server on the fake transport
// (fake_http_transport.h), for the Kubernetes pool's logic tests: one
// Deployment with its scale subresource, its pods, and the EndpointSlices of
// the Service in front of them, answering the calls the pool makes and
// checking each as the API documents it (bearer token, patch type, body).
// The process-tier twin over TLS, with pods that run, is
// test/support/fake_kube_api.py; both read the API's rules (paths, patch
// types, Status reasons and messages, the order a scale-down removes pods in,
// the Service's ports) from test/support/fake_kube_rules.json, and this one
// keeps the twin's names (namespace/Deployment/Service "lull"/"models"/"models",
// token "tok-123", pods models-K at 10.0.0.K+1):
//
//   a new pod is not ready in its first start_not_ready listings;
//   fail(method, status, count, path suffix) queues error answers (a Status body);
//   hang(count) makes the next requests time out after their own timeout;
//   lose_pod(name) removes a pod as a node failure does (the Deployment replaces it);
//   log() is every API request, "METHOD PATH|CONTENT_TYPE|BODY";
//   Options::name renames the Deployment, Service and pods (a lull shard's
//   own, "models-1": docs/operators-guide.md), Options::subnet the pods' 10.0.S.*.
// Without a transport it answers only what a test hands to answer() (one
// API server holding several Deployments: a router over several fakes).
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/net/json_value.h"
#include "test/support/fake_http_transport.h"

namespace lull::test {

class FakeKubernetesApi {
 public:
  static constexpr const char* kServer = "https://10.96.0.1:443";
  static constexpr const char* kToken = "tok-123";

  struct Options {
    int replicas = 2;
    int start_not_ready = 0;      // listings a new pod stays not ready
    std::string name = "models";  // the Deployment's, the Service's, the pods' prefix
    int subnet = 0;               // pods at 10.0.SUBNET.K+1
  };

  FakeKubernetesApi(FakeHttpTransport& http, Options options) : FakeKubernetesApi(std::move(options)) {
    http.fallback([this](const net::HttpRequest& r) { return answer(r); });
  }
  explicit FakeKubernetesApi(Options options) : options_(std::move(options)) {
    for (int i = 0; i < options_.replicas; ++i) add_pod(true);
  }

  // The next `count` requests of `method` (whose path ends in `suffix`) answer `status`; count -1: always.
  void fail(const std::string& method, int status, int count, const std::string& suffix = "") {
    std::lock_guard<std::mutex> lock(mu_);
    failures_.push_back({method, status, count, suffix});
  }
  void clear_failures() {
    std::lock_guard<std::mutex> lock(mu_);
    failures_.clear();
  }
  // The next `count` requests (-1: until cleared with 0) get no answer within their timeout.
  void hang(int count) {
    std::lock_guard<std::mutex> lock(mu_);
    hangs_ = count;
  }
  void lose_pod(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    pods_.erase(std::remove_if(pods_.begin(), pods_.end(), [&](const Pod& p) { return p.name == name; }), pods_.end());
    add_pod(options_.start_not_ready == 0);
  }
  std::vector<std::string> log() const {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

 private:
  struct Pod {
    std::string name, ip;
    bool ready = true;
    int cost = 0;
    int seq = 0;
    int lists_left = 0;
  };
  // test/support/fake_kube_rules.json, read once.
  struct Rules {
    std::string scale, pod, slices, selector, cost;
    std::vector<std::string> patch_types, implemented, order;
    std::map<int, std::pair<std::string, std::string>> statuses;  // code -> reason, message
    std::vector<std::pair<std::string, int>> ports;
  };
  static const Rules& rules() {
    static const Rules r = [] {
      const std::string file = std::string(LULL_SOURCE_DIR) + "/test/support/fake_kube_rules.json";
      std::ifstream in(file);
      std::stringstream text;
      text << in.rdbuf();
      net::JsonValue json;
      if (!in || !net::parse_json(text.str(), &json)) throw std::runtime_error("cannot read " + file);
      const auto strings = [&](const char* name) {
        std::vector<std::string> out;
        for (const auto& v : json.struct_value().fields().at(name).list_value().values())
          out.push_back(v.string_value());
        return out;
      };
      Rules r;
      const auto& paths = json.struct_value().fields().at("paths");
      r.scale = net::json_string(paths, "scale");
      r.pod = net::json_string(paths, "pod");
      r.slices = net::json_string(paths, "endpoint_slices");
      r.selector = net::json_string(paths, "service_selector");
      r.cost = net::json_string(json, "deletion_cost");
      r.patch_types = strings("patch_types");
      r.implemented = strings("patch_types_implemented");
      r.order = strings("scale_down_order");
      for (const auto& [code, v] : json.struct_value().fields().at("statuses").struct_value().fields())
        r.statuses[std::stoi(code)] = {net::json_string(v, "reason"), net::json_string(v, "message")};
      for (const auto& v : json.struct_value().fields().at("ports").list_value().values())
        r.ports.emplace_back(net::json_string(v, "name"), static_cast<int>(net::json_number(v, "port")));
      return r;
    }();
    return r;
  }
  static std::string replaced(std::string text, const std::string& key, const std::string& value) {
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
    return text;
  }
  std::string rule_path(const std::string& path) const {
    return replaced(replaced(path, "{namespace}", "lull"), "{deployment}", options_.name);
  }
  // Whether `a` goes before `b` in a scale-down (the rules' keys in turn).
  static bool removed_first(const Pod& a, const Pod& b) {
    for (const auto& key : rules().order) {
      const int x = key == "not_ready" ? a.ready : key == "lowest_deletion_cost" ? a.cost : -a.seq;
      const int y = key == "not_ready" ? b.ready : key == "lowest_deletion_cost" ? b.cost : -b.seq;
      if (x != y) return x < y;
    }
    return false;
  }
  struct Failure {
    std::string method;
    int status;
    int count;
    std::string suffix;
  };

  void add_pod(bool ready) {
    const int seq = next_seq_++;
    pods_.push_back({options_.name + "-" + std::to_string(seq),
                     "10.0." + std::to_string(options_.subnet) + "." + std::to_string(seq + 1), ready, 0, seq,
                     ready ? 0 : options_.start_not_ready});
  }
  void scale_to(int replicas) {
    while (static_cast<int>(pods_.size()) < replicas) add_pod(options_.start_not_ready == 0);
    while (static_cast<int>(pods_.size()) > replicas) {
      pods_.erase(std::min_element(pods_.begin(), pods_.end(), removed_first));
    }
  }

  // A Status answer: `message` "" is the rules' for `code`.
  net::HttpResponse status(int code, std::string message = "") const {
    const auto it = rules().statuses.find(code);
    const std::string reason = it == rules().statuses.end() ? "Unknown" : it->second.first;
    if (message.empty())
      message = it == rules().statuses.end() ? "Unknown" : replaced(it->second.second, "{deployment}", options_.name);
    return FakeHttpTransport::reply(
        code, "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":" + std::to_string(code) + ",\"reason\":\"" +
                  reason + "\",\"message\":" + net::json_quoted(message) + "}");
  }

  std::string scale_json() const {
    return "{\"kind\":\"Scale\",\"apiVersion\":\"autoscaling/v1\",\"spec\":{\"replicas\":" +
           std::to_string(pods_.size()) + "}}";
  }
  std::string slices_json() {
    std::string eps, ports;
    for (const auto& [name, port] : rules().ports)
      ports +=
          std::string(ports.empty() ? "" : ",") + "{\"name\":\"" + name + "\",\"port\":" + std::to_string(port) + "}";
    for (auto& p : pods_) {
      if (!eps.empty()) eps += ",";
      // "ready" absent on some: the API says absent means ready.
      const std::string ready = !p.ready || p.seq % 2 ? ",\"ready\":" + std::string(p.ready ? "true" : "false") : "";
      eps += "{\"addresses\":[\"" + p.ip + "\"],\"conditions\":{\"serving\":" + (p.ready ? "true" : "false") +
             ",\"terminating\":false" + ready + "},\"targetRef\":{\"kind\":\"Pod\",\"name\":\"" + p.name + "\"}}";
      p.lists_left = std::max(0, p.lists_left - 1);
      p.ready = p.lists_left == 0;  // ready from the listing after its Nth on
    }
    return "{\"kind\":\"EndpointSliceList\",\"items\":[{\"kind\":\"EndpointSlice\",\"addressType\":\"IPv4\","
           "\"endpoints\":" +
           (eps.empty() ? std::string("null") : "[" + eps + "]") + ",\"ports\":[" + ports + "]}]}";
  }

 public:
  net::HttpResponse answer(const net::HttpRequest& r) {
    const std::string prefix = kServer;
    if (r.url.rfind(prefix, 0) != 0) {
      net::HttpResponse refused;
      refused.error = "Connection refused";
      return refused;
    }
    const std::string path_and_query = r.url.substr(prefix.size());
    const std::string path = path_and_query.substr(0, path_and_query.find('?'));
    bool hangs = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(r.method + " " + path_and_query + "|" + (r.method == "PATCH" ? r.content_type : "") + "|" +
                     r.body);
      if (hangs_ != 0) {
        hangs = true;
        if (hangs_ > 0) --hangs_;
      }
    }
    if (hangs) {  // no answer within the request's own timeout (the fake's thread waits it out)
      std::this_thread::sleep_for(std::chrono::milliseconds(r.timeout_ms));
      net::HttpResponse none;
      none.error = "Timeout was reached";
      none.timed_out = true;
      none.elapsed_us = r.timeout_ms * 1000;
      return none;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (r.bearer_token != kToken) return status(401);
    for (auto& f : failures_)
      if (f.method == r.method && f.count != 0 && path.size() >= f.suffix.size() &&
          path.compare(path.size() - f.suffix.size(), f.suffix.size(), f.suffix) == 0) {
        if (f.count > 0) --f.count;
        return status(f.status);
      }
    const std::string scale = rule_path(rules().scale), pods = rule_path(rules().pod);
    if (path == scale && r.method == "GET") return FakeHttpTransport::reply(200, scale_json());
    if (r.method == "PATCH" && (path == scale || path.rfind(pods, 0) == 0)) {
      const std::string type = r.content_type.substr(0, r.content_type.find(';'));
      const auto known = [&](const std::vector<std::string>& types) {
        return std::find(types.begin(), types.end(), type) != types.end();
      };
      if (!known(rules().patch_types)) return status(415, "the body of the request was in an unknown format");
      if (!known(rules().implemented)) return status(415, "this fake implements merge patches only");
      net::JsonValue patch;
      if (!net::parse_json(r.body, &patch)) return status(400, "error decoding patch: not JSON");
      const auto only = [&](const char* key) {
        return patch.kind_case() == net::JsonValue::kStructValue && patch.struct_value().fields().size() == 1 &&
               net::json_field(patch, key) != nullptr;
      };
      if (path == scale) {
        const net::JsonValue* spec = net::json_field(patch, "spec");
        const net::JsonValue* n = spec ? net::json_field(*spec, "replicas") : nullptr;
        if (!only("spec") || !n || n->kind_case() != net::JsonValue::kNumberValue || n->number_value() < 0 ||
            n->number_value() != static_cast<int>(n->number_value()))
          return status(422, "Scale.autoscaling \"" + options_.name + "\" is invalid: spec.replicas");
        scale_to(static_cast<int>(n->number_value()));
        return FakeHttpTransport::reply(200, scale_json());
      }
      const std::string name = path.substr(pods.size());
      const auto pod = std::find_if(pods_.begin(), pods_.end(), [&](const Pod& p) { return p.name == name; });
      if (pod == pods_.end()) return status(404, "pods \"" + name + "\" not found");
      const net::JsonValue* meta = net::json_field(patch, "metadata");
      const net::JsonValue* annotations = meta ? net::json_field(*meta, "annotations") : nullptr;
      if (!only("metadata") || !annotations || annotations->kind_case() != net::JsonValue::kStructValue)
        return status(422, "Pod \"" + name + "\" is invalid: metadata.annotations");
      const std::string cost = net::json_string(*annotations, rules().cost);
      if (!cost.empty()) pod->cost = std::stoi(cost);
      return FakeHttpTransport::reply(200, "{\"kind\":\"Pod\"}");
    }
    if (path == rule_path(rules().slices) && r.method == "GET") {
      const std::string selector =
          "labelSelector=" + replaced(replaced(rules().selector, "/", "%2F"), "=", "%3D") + options_.name;
      const auto at = path_and_query.find(selector);
      if (at == std::string::npos || at + selector.size() != path_and_query.size())
        return FakeHttpTransport::reply(200, "{\"kind\":\"EndpointSliceList\",\"items\":[]}");
      return FakeHttpTransport::reply(200, slices_json());
    }
    return status(404);
  }

 private:
  Options options_;
  mutable std::mutex mu_;
  std::vector<Pod> pods_;
  int next_seq_ = 0;
  std::vector<Failure> failures_;
  int hangs_ = 0;
  std::vector<std::string> log_;
};

}  // namespace lull::test
