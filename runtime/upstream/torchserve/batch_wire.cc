// TorchServe's wire (why: see batch_wire.h).
#include "runtime/upstream/torchserve/batch_wire.h"

#include "runtime/net/json_value.h"
#include "runtime/upstream/torchserve/batch_codec.h"

namespace lull::torchserve {

namespace {

class TorchServeWire final : public BatchWire {
 public:
  net::HttpRequest batch_request(const std::string& base_url, const std::string& model,
                                 const std::vector<const std::string*>& inputs) const override {
    net::HttpRequest req;
    req.method = "POST";
    req.url = base_url + "/predictions/" + model;
    req.body = encode_batch_request(inputs);
    req.content_type = kBatchContentType;
    return req;
  }
  std::vector<std::string> decode_batch(const std::string& body, size_t expected) const override {
    return decode_batch_response(body, expected);
  }
  net::HttpRequest health_request(const std::string& base_url, const std::string& /*model*/) const override {
    net::HttpRequest req;
    req.url = base_url + "/ping";
    return req;
  }
  bool healthy(const net::HttpResponse& response) const override {
    return response.ok() && response.body.find("Healthy") != std::string::npos &&
           response.body.find("Unhealthy") == std::string::npos;
  }
  // TorchServe's own 503 when it cannot take the job: the model has no worker
  // (scaled to zero) or its job queue is full; 0.12 gives both the same body.
  // Its type and message are required, so that a proxy's 503 is not taken for it.
  bool not_ready(const net::HttpResponse& response) const override {
    if (!response.error.empty() || response.status != 503) return false;
    net::JsonValue doc;
    if (!net::parse_json(response.body, &doc) || doc.kind_case() != net::JsonValue::kStructValue) return false;
    return net::json_string(doc, "type") == "ServiceUnavailableException" &&
           net::json_string(doc, "message").find("has no worker to serve inference request") != std::string::npos;
  }
};

}  // namespace

const BatchWire& torchserve_wire() {
  static const TorchServeWire wire;
  return wire;
}

}  // namespace lull::torchserve
