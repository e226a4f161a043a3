// What every HttpTransport shares (why: see http_transport.h).
#include "runtime/net/http_transport.h"

#include <future>
#include <memory>

namespace lull::net {

std::string HttpResponse::header(const std::string& lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return v;
  return "";
}

std::string HttpResponse::describe() const {
  if (cancelled) return "cancelled";
  if (timed_out) return "timed out after " + std::to_string(elapsed_us / 1000) + " ms";
  if (!error.empty()) return error;
  return "HTTP " + std::to_string(status);
}

std::string describe_response_cap(std::int64_t max_response_bytes) {
  return "response body over the cap of " + std::to_string(max_response_bytes) + " bytes";
}

HttpResponse HttpTransport::fetch(HttpRequest request) {
  auto promise = std::make_shared<std::promise<HttpResponse>>();
  auto future = promise->get_future();
  send(std::move(request), [promise](HttpResponse r) { promise->set_value(std::move(r)); });
  return future.get();
}

}  // namespace lull::net
