// TorchServe management API client (why: see model_management.h).
#include "runtime/upstream/torchserve/model_management.h"

#include <cstdio>

#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::torchserve {

std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string describe_torchserve_error(const net::HttpResponse& r) {
  if (!r.error.empty()) return r.describe();
  net::JsonValue v;
  std::string reason = "HTTP " + std::to_string(r.status);
  if (net::parse_json(r.body, &v)) {
    const std::string type = net::json_string(v, "type"), message = net::json_string(v, "message");
    if (!type.empty()) reason += " " + type;
    if (!message.empty()) reason += ": " + message;
  }
  return reason;
}

ModelManagementClient::ModelManagementClient(net::HttpTransport& client, std::string management_url,
                                             ModelManagementOptions options)
    : client_(client), url_(normalize_base_url(management_url)), options_(std::move(options)) {}

net::HttpResponse ModelManagementClient::call(const std::string& method, const std::string& path_and_query) {
  net::HttpRequest req;
  req.method = method;
  req.url = url_ + path_and_query;
  const auto source =
      options_.server_key_source
          ? std::function<std::string(bool)>([this](bool refused) { return options_.server_key_source(url_, refused); })
          : options_.key_source;
  req.bearer_token = source ? source(false) : options_.management_key;
  req.timeout_ms = options_.timeout_ms;
  net::HttpResponse r = client_.fetch(req);
  if (source && is_token_refusal(r)) {
    std::string fresh = source(true);
    if (fresh != req.bearer_token) {
      req.bearer_token = std::move(fresh);
      r = client_.fetch(req);
    }
  }
  return r;
}

void ModelManagementClient::fail(const std::string& what, const net::HttpResponse& r) const {
  const std::string reason =
      is_token_refusal(r)
          ? describe_token_refusal(
                url_, "management",
                options_.key_source || options_.server_key_source || !options_.management_key.empty(), r)
          : describe_torchserve_error(r);
  throw ModelManagementError("management API " + url_ + ": " + what + " failed: " + reason, r.status);
}

std::string ModelManagementClient::load(const std::string& model_name, const std::string& archive_url) {
  const auto r = call("POST", "/models?url=" + url_encode(archive_url) + "&model_name=" + url_encode(model_name) +
                                  "&initial_workers=1&synchronous=true");
  // 200 only: a 202 ("Processing worker updates...") would mean not yet loaded.
  if (r.status != 200 || !r.error.empty()) fail("loading model " + model_name + " (url " + archive_url + ")", r);
  net::JsonValue v;
  return net::parse_json(r.body, &v) ? net::json_string(v, "status", r.body) : r.body;
}

std::string ModelManagementClient::unload(const std::string& model_name) {
  const auto r = call("DELETE", "/models/" + url_encode(model_name));
  if (!r.ok()) fail("unloading model " + model_name, r);
  net::JsonValue v;
  return net::parse_json(r.body, &v) ? net::json_string(v, "status", r.body) : r.body;
}

std::vector<std::string> ModelManagementClient::list() {
  std::vector<std::string> names;
  std::string token;
  for (int page = 0; page < 1000; ++page) {  // bounded: a server that loops its tokens cannot hang lull
    const auto r = call("GET", "/models" + (token.empty() ? "" : "?next_page_token=" + url_encode(token)));
    net::JsonValue v;
    if (!r.ok()) fail("listing models", r);
    const net::JsonValue* models = net::parse_json(r.body, &v) ? net::json_field(v, "models") : nullptr;
    if (!models || models->kind_case() != net::JsonValue::kListValue)
      throw ModelManagementError("management API " + url_ + ": listing models: the answer has no \"models\" list",
                                 r.status);
    for (const auto& m : models->list_value().values()) {
      const std::string name = net::json_string(m, "modelName");
      if (!name.empty()) names.push_back(name);
    }
    token = net::json_string(v, "nextPageToken");
    if (token.empty()) return names;
  }
  throw ModelManagementError("management API " + url_ + ": listing models: more than 1000 pages", 200);
}

}  // namespace lull::torchserve
