#include "runtime/serve/model_check.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <future>
#include <memory>

namespace lull::serve {

namespace {

using google::protobuf::Value;

bool parse_json(const std::string& text, Value* out) {
  return google::protobuf::util::JsonStringToMessage(text, out).ok();
}

// TorchServe answers GET /models/{name} with a list of versions, each with its
// workers; a model counts as loaded when some version has a worker.
bool has_ready_worker(const std::string& body) {
  Value v;
  if (!parse_json(body, &v) || v.kind_case() != Value::kListValue) return false;
  for (const auto& version : v.list_value().values()) {
    if (version.kind_case() != Value::kStructValue) continue;
    const auto& f = version.struct_value().fields();
    auto workers = f.find("workers");
    if (workers != f.end() && workers->second.kind_case() == Value::kListValue &&
        workers->second.list_value().values_size() > 0)
      return true;
  }
  return false;
}

std::string loaded_list(HttpClient& client, const WorkerEndpoint& w, std::int64_t timeout_ms) {
  HttpRequest req;
  req.url = w.management_url + "/models";
  req.timeout_ms = timeout_ms;
  auto r = client.fetch(req);
  Value v;
  if (!r.ok() || !parse_json(r.body, &v) || v.kind_case() != Value::kStructValue) return "?";
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

void check_models_loaded(HttpClient& client, const std::vector<WorkerEndpoint>& workers,
                         const std::vector<std::string>& models, std::int64_t timeout_ms) {
  // All requests at once, then collect: start-up stays fast with many workers.
  struct Probe {
    size_t worker, model;
    std::future<HttpResponse> response;
  };
  std::vector<Probe> probes;
  for (size_t w = 0; w < workers.size(); ++w) {
    for (size_t m = 0; m < models.size(); ++m) {
      auto p = std::make_shared<std::promise<HttpResponse>>();
      probes.push_back({w, m, p->get_future()});
      HttpRequest req;
      req.url = workers[w].management_url + "/models/" + models[m];
      req.timeout_ms = timeout_ms;
      req.connect_timeout_ms = timeout_ms;
      client.send(req, [p](HttpResponse r) { p->set_value(std::move(r)); });
    }
  }
  std::vector<std::vector<std::string>> missing(workers.size());
  std::vector<std::string> unreachable(workers.size());
  for (auto& probe : probes) {
    HttpResponse r = probe.response.get();
    if (!r.error.empty()) {
      unreachable[probe.worker] = r.describe();
    } else if (!(r.ok() && has_ready_worker(r.body))) {
      missing[probe.worker].push_back(models[probe.model]);
    }
  }
  std::string problems;
  for (size_t w = 0; w < workers.size(); ++w) {
    std::string line;
    if (!unreachable[w].empty()) {
      line = "management API " + workers[w].management_url + " unreachable (" + unreachable[w] + ")";
    } else if (!missing[w].empty()) {
      line = "worker " + workers[w].management_url + " lacks model";
      line += missing[w].size() > 1 ? "s " : " ";
      for (size_t i = 0; i < missing[w].size(); ++i) line += (i ? ", " : "") + missing[w][i];
      line += " (loaded: " + loaded_list(client, workers[w], timeout_ms) + ")";
    }
    if (!line.empty()) problems += (problems.empty() ? "" : "; ") + line;
  }
  if (!problems.empty()) throw ModelCheckError(problems);
}

}  // namespace lull::serve
