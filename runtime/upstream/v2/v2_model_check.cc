// The v2 start-up check (why: see v2_model_check.h).
#include "runtime/upstream/v2/v2_model_check.h"

#include <future>
#include <memory>

#include "runtime/net/json_value.h"
#include "runtime/upstream/v2/v2_codec.h"
#include "runtime/upstream/v2/v2_wire.h"

namespace lull::v2 {

namespace {

// "" when the metadata takes what lull sends, else why not. `input` is the
// flag's name ("": none given); *declared is set to the model's one input's
// name when it declares exactly one.
std::string input_problem(const net::HttpResponse& metadata, const std::string& input, std::string* declared) {
  if (!metadata.ok()) return "metadata: " + metadata.describe();
  net::JsonValue doc;
  if (!net::parse_json(metadata.body, &doc)) return "metadata is not JSON";
  const net::JsonValue* inputs = net::json_field(doc, "inputs");
  if (!inputs || inputs->kind_case() != net::JsonValue::kListValue || inputs->list_value().values_size() == 0)
    return "";
  std::string names;
  const std::string want = input.empty() ? kDefaultV2InputName : input;
  if (input.empty() && inputs->list_value().values_size() == 1 &&
      !net::json_string(inputs->list_value().values(0), "name").empty()) {
    *declared = net::json_string(inputs->list_value().values(0), "name");  // its only input: what lull sends it
    return "";
  }
  for (const auto& i : inputs->list_value().values()) {
    const std::string name = net::json_string(i, "name");
    if (name == want) return "";
    names += (names.empty() ? "" : ", ") + name;
  }
  return "its inputs are [" + names + "], none named '" + want + "' (--v2-input-name)";
}

}  // namespace

void check_v2_models_ready(net::HttpTransport& client, const std::vector<torchserve::WorkerEndpoint>& workers,
                           const std::vector<std::string>& models, const V2ModelCheckOptions& options) {
  for (const auto& m : models)
    if (m.find_first_of("/?#% ") != std::string::npos)
      throw torchserve::ModelCheckError("model name '" + m + "' cannot be a v2 URL path segment");
  // All requests at once, then collect: start-up stays fast with many workers.
  auto ask = [&](const std::string& url) {
    auto p = std::make_shared<std::promise<net::HttpResponse>>();
    net::HttpRequest req;
    req.url = url;
    req.timeout_ms = options.timeout_ms;
    req.connect_timeout_ms = options.timeout_ms;
    client.send(req, [p](net::HttpResponse r) { p->set_value(std::move(r)); });
    return p->get_future();
  };
  struct Probe {
    std::future<net::HttpResponse> ready, metadata;
  };
  std::vector<std::vector<Probe>> probes(workers.size());
  std::vector<std::future<net::HttpResponse>> server_metadata;
  if (options.binary_servers)
    for (const auto& worker : workers) server_metadata.push_back(ask(worker.inference_url + "/v2"));
  for (size_t w = 0; w < workers.size(); ++w)
    for (const auto& m : models) {
      const std::string url = v2_model_url(workers[w].inference_url, m);
      probes[w].push_back({ask(url + "/ready"), ask(url)});
    }
  std::string report;
  for (size_t w = 0; w < workers.size(); ++w) {
    std::string problems;
    for (size_t m = 0; m < models.size(); ++m) {
      const net::HttpResponse ready = probes[w][m].ready.get();
      const net::HttpResponse metadata = probes[w][m].metadata.get();
      std::string why;
      if (ready.status == 0) {
        why = "cannot be asked (" + ready.describe() + ")";
      } else if (!v2_model_ready(ready)) {
        const std::string message = v2_error_message(ready.body);
        why = "not ready (" + ready.describe() + (message.empty() ? "" : ": " + message) + ")";
      } else {
        std::string declared;
        why = input_problem(metadata, options.input_name, &declared);
        if (why.empty() && !declared.empty() && options.declared) {
          auto [at, fresh] = options.declared->emplace(models[m], declared);
          if (!fresh && at->second != declared)
            why = "declares its input '" + declared + "' here and '" + at->second +
                  "' on another server (give --v2-input-name)";
        }
      }
      if (!why.empty()) problems += (problems.empty() ? "" : "; ") + models[m] + " " + why;
    }
    if (!problems.empty())
      report += (report.empty() ? "" : "; ") + std::string("server ") + workers[w].inference_url + ": " + problems;
  }
  for (size_t w = 0; w < server_metadata.size(); ++w) {
    const net::HttpResponse r = server_metadata[w].get();
    net::JsonValue doc;
    if (!r.ok() || !net::parse_json(r.body, &doc)) continue;  // no metadata: JSON, as before
    const net::JsonValue* extensions = net::json_field(doc, "extensions");
    if (extensions && extensions->kind_case() == net::JsonValue::kListValue)
      for (const auto& e : extensions->list_value().values())
        if (e.kind_case() == net::JsonValue::kStringValue && e.string_value() == "binary_tensor_data")
          options.binary_servers->insert(workers[w].inference_url);
  }
  if (!report.empty()) throw torchserve::ModelCheckError("v2 model check: " + report);
}

}  // namespace lull::v2
