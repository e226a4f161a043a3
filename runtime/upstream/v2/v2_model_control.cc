// Loading and unloading through the v2 repository extension (why: see v2_model_control.h).
#include "runtime/upstream/v2/v2_model_control.h"

#include <stdexcept>

#include "runtime/upstream/v2/v2_codec.h"

namespace lull::v2 {

void V2ModelControl::call(const std::string& url, const std::string& model, const std::string& action) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = url + "/v2/repository/models/" + model + "/" + action;
  req.body = "{}";
  req.content_type = kV2ContentType;
  req.timeout_ms = timeout_ms_;
  const net::HttpResponse r = client_.fetch(req);
  if (r.ok()) return;
  const std::string message = v2_error_message(r.body);
  throw std::runtime_error(req.url + ": " + r.describe() + (message.empty() ? "" : ": " + message));
}

void V2ModelControl::load(const std::string& url, const std::string& model) { call(url, model, "load"); }

void V2ModelControl::unload(const std::string& url, const std::string& model) { call(url, model, "unload"); }

}  // namespace lull::v2
