// The v2 wire (why: see v2_wire.h).
#include "runtime/upstream/v2/v2_wire.h"

#include <algorithm>

#include "runtime/net/json_value.h"
#include "runtime/upstream/v2/v2_codec.h"

namespace lull::v2 {

std::string v2_model_url(const std::string& base_url, const std::string& model) {
  return base_url + "/v2/models/" + model;
}

bool v2_model_ready(const net::HttpResponse& response) {
  if (!response.ok()) return false;
  net::JsonValue doc;
  return !net::parse_json(response.body, &doc) || net::json_bool(doc, "ready", true);
}

net::HttpRequest V2Wire::batch_request(const std::string& base_url, const std::string& model,
                                       const std::vector<const std::string*>& inputs) const {
  net::HttpRequest req;
  req.method = "POST";
  req.url = v2_model_url(base_url, model) + "/infer";
  // Tensor queries of one layout (same_request keeps a batch's parts to one)
  // go stacked; anything else as bytes.
  std::vector<V2TensorQuery> tensors;
  for (const std::string* in : inputs) {
    tensors.push_back(read_v2_tensor_query(*in));
    if (tensors.back().layout.empty() || tensors.back().layout != tensors.front().layout) {
      tensors.clear();
      break;
    }
  }
  std::string name = input_name_;
  bool declared = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = declared_.find(model);
    if (it != declared_.end()) name = it->second, declared = true;
  }
  if (declared && !tensors.empty() && tensors.front().names.size() == 1) {
    // A model declaring one input gets a one-input tensor query under its name.
    for (auto& t : tensors) t.names[0] = name;
  }
  req.content_type = kV2ContentType;
  if (!tensors.empty()) {
    req.body = encode_v2_tensor_request(tensors);
  } else if (sends_binary(base_url)) {
    size_t header = 0;
    req.body = encode_v2_bytes_binary_request(inputs, name, &header);
    req.headers.emplace_back("Inference-Header-Content-Length", std::to_string(header));
    req.content_type = "application/octet-stream";
  } else {
    req.body = encode_v2_bytes_request(inputs, name);
  }
  return req;
}

bool V2Wire::same_request(const std::string& a, const std::string& b) const {
  return read_v2_tensor_query(a).layout == read_v2_tensor_query(b).layout;
}

std::vector<std::string> V2Wire::decode_batch(const std::string& body, size_t expected) const {
  return decode_v2_infer_response(body, expected);
}

net::HttpRequest V2Wire::health_request(const std::string& base_url, const std::string& model) const {
  net::HttpRequest req;
  req.url = v2_model_url(base_url, model) + "/ready";
  return req;
}

bool V2Wire::healthy(const net::HttpResponse& response) const { return v2_model_ready(response); }

bool V2Wire::not_ready(const net::HttpResponse& response) const {
  return response.error.empty() && response.status >= 400 && response.status < 500 &&
         v2_error_message(response.body).find("not ready") != std::string::npos;
}

std::int64_t V2Wire::envelope_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return v2_envelope_bytes(input_name_) + 5 * longest_declared_;  // a longer learned name escapes to at most this more
}

void V2Wire::learn_input_names(const std::map<std::string, std::string>& declared) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [model, name] : declared) {
    declared_[model] = name;
    longest_declared_ = std::max<std::int64_t>(longest_declared_, static_cast<std::int64_t>(name.size()));
  }
}

void V2Wire::learn_binary_servers(const std::set<std::string>& inference_urls) {
  std::lock_guard<std::mutex> lock(mu_);
  binary_servers_.insert(inference_urls.begin(), inference_urls.end());
}

bool V2Wire::sends_binary(const std::string& base_url) const {
  if (binary_ != Binary::kAuto) return binary_ == Binary::kOn;
  std::lock_guard<std::mutex> lock(mu_);
  return binary_servers_.count(base_url) > 0;
}

std::string V2Wire::input_name(const std::string& model) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = declared_.find(model);
  return it == declared_.end() ? input_name_ : it->second;
}

}  // namespace lull::v2
