// The management-API start-up check (why: see model_check.h).
#include "runtime/upstream/torchserve/model_check.h"

#include <algorithm>
#include <future>
#include <memory>

#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/torchserve_token.h"

namespace lull::torchserve {

namespace {

using Value = net::JsonValue;

// TorchServe answers GET /models/{name} with a list of versions, each with its
// workers; a model counts as loaded when some version has a worker that is
// READY (or says nothing of its status).
bool ready_worker(const Value& w) { return net::json_string(w, "status", "READY") == "READY"; }

bool has_ready_worker(const std::string& body) {
  Value v;
  if (!net::parse_json(body, &v) || v.kind_case() != Value::kListValue) return false;
  for (const auto& version : v.list_value().values()) {
    if (version.kind_case() != Value::kStructValue) continue;
    const auto& f = version.struct_value().fields();
    auto workers = f.find("workers");
    if (workers == f.end() || workers->second.kind_case() != Value::kListValue) continue;
    for (const auto& w : workers->second.list_value().values())
      if (ready_worker(w)) return true;
  }
  return false;
}

std::string loaded_list(net::HttpTransport& client, const WorkerEndpoint& w, const ModelCheckOptions& options) {
  net::HttpRequest req;
  req.url = w.management_url + "/models";
  req.timeout_ms = options.timeout_ms;
  req.bearer_token = options.management_key_for ? options.management_key_for(w.management_url) : options.management_key;
  auto r = client.fetch(req);
  Value v;
  if (!r.ok() || !net::parse_json(r.body, &v) || v.kind_case() != Value::kStructValue) return "?";
  std::string names;
  const auto& f = v.struct_value().fields();
  auto models = f.find("models");
  if (models == f.end() || models->second.kind_case() != Value::kListValue) return "?";
  for (const auto& m : models->second.list_value().values()) {
    if (m.kind_case() != Value::kStructValue) continue;
    auto n = m.struct_value().fields().find("modelName");
    if (n == m.struct_value().fields().end()) continue;
    names += (names.empty() ? "" : ", ") + n->second.string_value();
  }
  return names.empty() ? "none" : names;
}

}  // namespace

std::vector<std::string> check_models_loaded(net::HttpTransport& client, const std::vector<WorkerEndpoint>& workers,
                                             const std::vector<std::string>& models, const ModelCheckOptions& options) {
  // All requests at once, then collect: start-up stays fast with many workers.
  struct Probe {
    size_t worker, model;
    std::future<net::HttpResponse> response;
  };
  std::vector<Probe> probes;
  for (size_t w = 0; w < workers.size(); ++w) {
    for (size_t m = 0; m < models.size(); ++m) {
      auto p = std::make_shared<std::promise<net::HttpResponse>>();
      probes.push_back({w, m, p->get_future()});
      client.send(model_check_request(workers[w], models[m], options),
                  [p](net::HttpResponse r) { p->set_value(std::move(r)); });
    }
  }
  std::vector<std::string> warnings;
  std::vector<std::string> refused(workers.size());
  std::vector<std::vector<std::string>> missing(workers.size());
  std::vector<std::string> unreachable(workers.size());
  for (auto& probe : probes) {
    net::HttpResponse r = probe.response.get();
    if (!r.error.empty()) {
      unreachable[probe.worker] = r.describe();
    } else if (is_token_refusal(r)) {
      refused[probe.worker] = describe_token_refusal(workers[probe.worker].management_url, "management",
                                                     !options.management_key.empty() || options.management_key_for, r);
    } else if (!model_loaded(r)) {
      missing[probe.worker].push_back(models[probe.model]);
    } else {
      auto warning = batching_warning(workers[probe.worker].management_url, models[probe.model], r.body);
      if (!warning.empty()) warnings.push_back(std::move(warning));
    }
  }
  std::string problems;
  for (size_t w = 0; w < workers.size(); ++w) {
    std::string line;
    if (!unreachable[w].empty()) {
      line = "management API " + workers[w].management_url + " unreachable (" + unreachable[w] + ")";
    } else if (!refused[w].empty()) {
      line = refused[w];
    } else if (!missing[w].empty()) {
      line = "worker " + workers[w].management_url + " lacks model";
      line += missing[w].size() > 1 ? "s " : " ";
      for (size_t i = 0; i < missing[w].size(); ++i) line += (i ? ", " : "") + missing[w][i];
      line += " (loaded: " + loaded_list(client, workers[w], options) + ")";
    }
    if (!line.empty()) problems += (problems.empty() ? "" : "; ") + line;
  }
  if (!problems.empty()) throw ModelCheckError(problems);
  return warnings;
}

net::HttpRequest model_check_request(const WorkerEndpoint& worker, const std::string& model,
                                     const ModelCheckOptions& options) {
  net::HttpRequest req;
  req.url = worker.management_url + "/models/" + model;
  req.timeout_ms = options.timeout_ms;
  req.connect_timeout_ms = options.timeout_ms;
  req.bearer_token =
      options.management_key_for ? options.management_key_for(worker.management_url) : options.management_key;
  return req;
}

bool model_loaded(const net::HttpResponse& response) { return response.ok() && has_ready_worker(response.body); }

std::string batching_warning(const std::string& worker_url, const std::string& model, const std::string& body) {
  Value v;
  if (!net::parse_json(body, &v) || v.kind_case() != Value::kListValue) return "";
  for (const auto& version : v.list_value().values()) {
    if (version.kind_case() != Value::kStructValue) continue;
    const auto& f = version.struct_value().fields();
    auto number = [&](const char* name) {
      auto it = f.find(name);
      return it != f.end() && it->second.kind_case() == Value::kNumberValue ? it->second.number_value() : 0.0;
    };
    const double batch_size = number("batchSize"), delay_ms = number("maxBatchDelay");
    if (batch_size > 1 && delay_ms > 0)
      return "worker " + worker_url + " model " + model + ": batchSize " + std::to_string(int(batch_size)) +
             ", maxBatchDelay " + std::to_string(int(delay_ms)) +
             " ms: TorchServe holds each of lull's batches up to that delay; register it with batchSize 1 "
             "(lull sends each batch as one request)";
  }
  return "";
}

double model_memory_mb(const std::string& body) {
  Value v;
  if (!net::parse_json(body, &v) || v.kind_case() != Value::kListValue) return 0;
  double bytes = 0;
  for (const auto& version : v.list_value().values()) {
    if (version.kind_case() != Value::kStructValue) continue;
    const auto& f = version.struct_value().fields();
    const auto workers = f.find("workers");
    if (workers == f.end() || workers->second.kind_case() != Value::kListValue) continue;
    for (const auto& w : workers->second.list_value().values()) {
      if (w.kind_case() != Value::kStructValue) continue;
      const auto& wf = w.struct_value().fields();
      const auto mem = wf.find("memoryUsage");
      if (mem != wf.end() && mem->second.kind_case() == Value::kNumberValue)
        bytes = std::max(bytes, mem->second.number_value());
    }
  }
  return bytes / (1024.0 * 1024.0);
}

}  // namespace lull::torchserve
