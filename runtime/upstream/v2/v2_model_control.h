#pragma once
// ModelControl (runtime/core/model_control.h) over the Open Inference Protocol's
// model repository extension (Triton's): POST {url}/v2/repository/models/{m}/load
// and .../unload, synchronous, 200 on success and an error status with
// {"error": "..."} otherwise. A worker is its base URL (--servers, or
// --management-urls when the repository API listens elsewhere).
#include <cstdint>
#include <string>

#include "runtime/core/model_control.h"
#include "runtime/net/http_transport.h"

namespace lull::v2 {

class V2ModelControl final : public core::ModelControl {
 public:
  // `client` must outlive this; `timeout_ms` bounds one load (a model may take long).
  explicit V2ModelControl(net::HttpTransport& client, std::int64_t timeout_ms = 120000)
      : client_(client), timeout_ms_(timeout_ms) {}
  void load(const std::string& url, const std::string& model) override;
  void unload(const std::string& url, const std::string& model) override;

 private:
  void call(const std::string& url, const std::string& model, const std::string& action);

  net::HttpTransport& client_;
  std::int64_t timeout_ms_;
};

}  // namespace lull::v2
