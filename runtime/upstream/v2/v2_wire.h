#pragma once
// The Open Inference Protocol (KServe v2) as the HTTP batch backend's wire
// (runtime/upstream/torchserve/batch_wire.h; `lull serve --backend v2`): a batch is
// ONE POST /v2/models/{model}/infer with a BYTES input of shape [B], or
// the tensor inputs the queries carry stacked (v2_codec.h), and a worker is healthy while GET /v2/models/{model}/ready
// answers 2xx and does not say "ready": false, for the model its last batch
// ran (so a worker whose other models are being loaded or unloaded stays in
// rotation).
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "runtime/upstream/torchserve/batch_wire.h"

namespace lull::v2 {

inline constexpr const char* kDefaultV2InputName = "input";

class V2Wire final : public torchserve::BatchWire {
 public:
  // `input_name`: the name of the BYTES input the models take (--v2-input-name);
  // "" (or the default): each model's own where learned from its metadata, else "input".
  explicit V2Wire(std::string input_name = kDefaultV2InputName) : input_name_(std::move(input_name)) {
    if (input_name_.empty()) input_name_ = kDefaultV2InputName;
  }
  // Models' one declared input (the start check's V2ModelCheckOptions::declared):
  // their bytes batches go under that name, and a tensor query of one input is
  // renamed to it. Thread-safe (an autoscaled pool's checks learn while serving).
  void learn_input_names(const std::map<std::string, std::string>& declared);
  // The input name sent to `model`.
  std::string input_name(const std::string& model) const;
  net::HttpRequest batch_request(const std::string& base_url, const std::string& model,
                                 const std::vector<const std::string*>& inputs) const override;
  bool same_request(const std::string& a, const std::string& b) const override;
  std::vector<std::string> decode_batch(const std::string& body, size_t expected) const override;
  net::HttpRequest health_request(const std::string& base_url, const std::string& model) const override;
  bool healthy(const net::HttpResponse& response) const override;
  // A 4xx whose error message says "not ready" (MLServer's 400 for a model
  // still loading).
  bool not_ready(const net::HttpResponse& response) const override;
  std::int64_t envelope_bytes() const override;

  // The binary tensor extension toward servers (encode_v2_bytes_binary_request):
  // kAuto uses it with the servers whose metadata lists "binary_tensor_data"
  // (learn_binary_servers), kOn with every server, kOff never. Bytes batches
  // only; tensor queries go as JSON.
  enum class Binary { kAuto, kOn, kOff };
  void set_binary(Binary mode) { binary_ = mode; }
  void learn_binary_servers(const std::set<std::string>& inference_urls);
  bool sends_binary(const std::string& base_url) const;

 private:
  std::string input_name_;
  Binary binary_ = Binary::kAuto;
  mutable std::mutex mu_;
  std::set<std::string> binary_servers_;         // under mu_
  std::map<std::string, std::string> declared_;  // under mu_
  std::int64_t longest_declared_ = 0;            // under mu_
};

// True when a model-ready answer says the model is ready: 2xx, and its JSON
// (when it is JSON) does not hold "ready": false.
bool v2_model_ready(const net::HttpResponse& response);

// URL-path forms (a model name is sent as it is; names with '/' or '?' are refused at the check).
std::string v2_model_url(const std::string& base_url, const std::string& model);

}  // namespace lull::v2
