// TorchServe's wire (why: see batch_wire.h).
#include "runtime/upstream/torchserve/batch_wire.h"

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
};

}  // namespace

const BatchWire& torchserve_wire() {
  static const TorchServeWire wire;
  return wire;
}

}  // namespace lull::torchserve
